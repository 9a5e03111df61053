/**
 * The one place an activity's failure leaves the worker: it is replaced by a masked copy
 * (config/secrets.ts) before the SDK logs it and records it in the workflow history, so a key echoed
 * by an endpoint's error body reaches neither. A copy, not the error itself: SDK errors carry the
 * response body and headers as properties, which the logger prints in full.
 */
import { ApplicationFailure, TemporalFailure } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { maskSecrets } from '../config/secrets.js';
import { isPermanent } from '../domain/errors.js';

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
 * decides retries, with message and stack masked; any other error becomes an ApplicationFailure of
 * the same name and type (the type Temporal would record for it, which retry policies match on)
 * with only masked text.
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
  // Temporal records a plain error's type from its class: the copy is an ApplicationFailure carrying
  // the original's type, and non-retryable when the error is permanent (domain/errors.ts), the one
  // place every activity's permanent errors stop the retries.
  const copy = ApplicationFailure.create({
    message: maskSecrets(err.message),
    type: err.constructor?.name ?? err.name,
    nonRetryable: isPermanent(err),
    ...(cause instanceof Error ? { cause } : {}),
  });
  Object.defineProperty(copy, 'name', { value: err.name, configurable: true, writable: true });
  copy.stack = err.stack === undefined ? undefined : maskSecrets(err.stack);
  return copy;
}
