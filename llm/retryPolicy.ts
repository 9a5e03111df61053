/**
 * Which failed model calls are retried here and how long to wait. The SDK's own retries are off
 * (endpoint.ts) so that every attempt passes through the endpoint's limiter: a retry storm from
 * many activities would otherwise bypass the concurrency window and the rate budgets.
 */
import OpenAI from 'openai';
import { unusableOf } from './replyCheck.js';
import type { FailureKind } from '../domain/failureKind.js';

export interface RetryPolicy {
  /** Attempts per call, the first included; after the last the error fails the activity and Temporal retries it. */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 6, baseDelayMs: 1000, maxDelayMs: 30_000 };

const REFUSING_STATUSES = new Set([400, 413, 422]);
const TRANSIENT_STATUSES = new Set([408, 409]);

export function classifyFailure(err: unknown): FailureKind {
  // Before the status checks: the SDK wraps a capped body as a connection error.
  if (unusableOf(err)) return 'unusable';
  if (!(err instanceof OpenAI.APIError)) return 'fatal';
  // APIConnectionError and its timeout subclass carry no status.
  if (err.status === undefined) return 'transient';
  // OpenAI answers 429 (and some proxies 400 or 403) when the account is out of credit; waiting does not refill it.
  if (err.code === 'insufficient_quota') return 'permanent';
  if (REFUSING_STATUSES.has(err.status)) return 'refused';
  if (err.status === 429) return 'rate-limited';
  if (err.status >= 500 || TRANSIENT_STATUSES.has(err.status)) return 'transient';
  return 'permanent';
}

/** "Full jitter": uniform in [0, min(max, base·2^(attempt−1))], so a burst of failures does not retry in lockstep. */
export function backoffMs(policy: RetryPolicy, attempt: number, random: () => number = Math.random): number {
  return random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
}
