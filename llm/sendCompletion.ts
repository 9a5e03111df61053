/**
 * One chat completion sent through the endpoint's worker-wide limiter (limiter.ts), attempted until
 * it succeeds, is refused, or runs out of attempts (retryPolicy.ts): 429s wait for the paused
 * endpoint, 5xx / connection errors / timeouts back off with jitter, and after the last attempt the
 * error fails the activity so Temporal retries it. Request refusals (400, 413, 422) become sample
 * rejections that name the endpoint; answers no retry can change (401, 403, 404, no quota) become
 * non-retryable EndpointErrors.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import OpenAI, { type APIError } from 'openai';
import type { ChatCompletion, ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import type { EndpointConfig, Stage } from '../config/buildConfig.js';
import { SampleRejection } from '../domain/rejection.js';
import { abortSignal } from './abortScope.js';
import { clientFor, type ResolvedEndpoint } from './endpoint.js';
import { describeFault, faultOf, permanentError } from './endpointError.js';
import { limiterFor, type EndpointLimits, type Ticket } from './limiter.js';
import { backoffMs, classifyFailure, type RetryPolicy } from './retryPolicy.js';
import { estimateRequestTokens } from './tokenEstimate.js';

export interface Sending {
  stage: Stage;
  /** The endpoint as configured (its key variable names the secret in messages) and as resolved. */
  config: EndpointConfig;
  endpoint: ResolvedEndpoint;
  limits: EndpointLimits;
  retry: RetryPolicy;
  timeoutMs: number;
  /** Runs once, as the first attempt leaves the limiter's queue. */
  beforeFirstSend?: () => Promise<void>;
}

export async function sendCompletion(s: Sending, body: ChatCompletionCreateParamsNonStreaming): Promise<ChatCompletion> {
  const limiter = limiterFor(s.endpoint, s.limits);
  const client = clientFor(s.endpoint, s.timeoutMs);
  const estimate = estimateRequestTokens(body);
  const place = limiter.place();
  const signal = abortSignal();
  for (let attempt = 1; ; attempt++) {
    try {
      return await limiter.run(
        estimate,
        async (ticket) => {
          signal?.throwIfAborted(); // aborted the moment it was admitted
          if (attempt === 1) await s.beforeFirstSend?.();
          return attemptCompletion(client, body, ticket, signal);
        },
        place,
        s.limits,
        signal,
      );
    } catch (err) {
      // Cancelled: neither a fault of the endpoint nor worth another attempt.
      if (signal?.aborted) throw signal.reason;
      const kind = classifyFailure(err);
      if (kind === 'rejected') {
        const fault = faultOf(err as APIError, s.endpoint);
        throw new SampleRejection(`${s.stage}: endpoint-refused: ${describeFault(fault)}`, { modelCall: fault });
      }
      if (kind === 'permanent') throw permanentError(err as APIError, s.endpoint, s.config.apiKeyEnv);
      if (kind === 'fatal' || attempt >= s.retry.maxAttempts) throw err;
      // A 429 needs no wait here: the limiter holds the endpoint until its Retry-After.
      if (kind === 'transient') await sleep(backoffMs(s.retry, attempt), undefined, { signal });
    }
  }
}

/** Tells the limiter how the attempt went: the response headers carry the provider's x-ratelimit-* budgets. */
async function attemptCompletion(client: OpenAI, body: ChatCompletionCreateParamsNonStreaming, ticket: Ticket, signal?: AbortSignal): Promise<ChatCompletion> {
  try {
    const { data, response } = await client.chat.completions.create(body, signal ? { signal } : undefined).withResponse();
    ticket.succeeded(response.headers, data.usage?.total_tokens);
    return data;
  } catch (err) {
    if (classifyFailure(err) === 'rate-limited') ticket.rateLimited((err as APIError).headers);
    throw err;
  }
}
