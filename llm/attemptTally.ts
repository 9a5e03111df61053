/**
 * The failed attempts of model requests made under the work in progress (a stage's slice), by kind
 * (retryPolicy.ts: rate-limited, transient, refused, unusable, permanent, fatal), retried or not:
 * what `mmif status` shows as errors by class. Carried implicitly, like the abort signal
 * (abortScope.ts), because one cached ModelCaller serves many slices at once.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { FailureKind } from './retryPolicy.js';

export type AttemptTally = Partial<Record<FailureKind, number>>;

const current = new AsyncLocalStorage<AttemptTally>();

/** Runs `work` counting into `tally` the failed attempts of every request it makes. */
export function withAttemptTally<T>(tally: AttemptTally, work: () => Promise<T>): Promise<T> {
  return current.run(tally, work);
}

export function tallyFailedAttempt(kind: FailureKind): void {
  const tally = current.getStore();
  if (tally) tally[kind] = (tally[kind] ?? 0) + 1;
}

/** Adds `more` into `into`. */
export function addTally(into: AttemptTally, more: AttemptTally): void {
  for (const [kind, n] of Object.entries(more) as Array<[FailureKind, number]>) into[kind] = (into[kind] ?? 0) + n;
}
