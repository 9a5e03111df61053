/**
 * The one place an activity's failure leaves the worker: it is replaced by a masked copy
 * (config/secrets.ts) before the SDK logs it and records it in the workflow history, so a key echoed
 * by an endpoint's error body reaches neither. A copy, not the error itself: SDK errors carry the
 * response body and headers as properties, which the logger prints in full.
 */
import { TemporalFailure } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { maskSecrets } from '../config/secrets.js';

export const maskSecretsInActivityFailures: ActivityInterceptorsFactory = () => ({
  inbound: {
    async execute(input, next) {
      try {
        return await next(input);
      } catch (err) {
        throw maskedFailure(err);
      }
    },
  },
});

/**
 * Temporal's own failures (non-retryable ApplicationFailure, cancellation) keep their class, which
 * decides retries, with message and stack masked; any other error becomes a plain Error of the same
 * name (the failure type Temporal records and retry policies match on) with only masked text.
 */
export function maskedFailure(err: unknown, depth = 0): unknown {
  if (!(err instanceof Error) || depth > 10) return err;
  const cause = err.cause === undefined ? undefined : maskedFailure(err.cause, depth + 1);
  if (err instanceof TemporalFailure) {
    err.message = maskSecrets(err.message);
    if (err.stack) err.stack = maskSecrets(err.stack);
    if (cause !== undefined) (err as { cause?: unknown }).cause = cause;
    return err;
  }
  const copy = new Error(maskSecrets(err.message), cause === undefined ? undefined : { cause });
  copy.name = err.name;
  copy.stack = err.stack === undefined ? undefined : maskSecrets(err.stack);
  return copy;
}
