/**
 * What a slice's model requests counted on their way, carried as one object from the worker's
 * request path (llm/tallyScope.ts) through the slice's outcome and heartbeats to the shard's and
 * the build's progress, `mmif status`, the build report and the card: their failed attempts by
 * kind (llm/retryPolicy.ts: rate-limited, transient, refused...), retried or not, and where their
 * attempts went among the replicas of endpoints with several (domain/replicaShares.ts). Every layer
 * adds one tally into another with addTallies. Pure, for the workflow bundle.
 */
import { addCounts } from './counts.js';
import { noReplicaCounts, type ReplicaTally } from './replicaShares.js';
import type { FailureKind } from './failureKind.js';

type AttemptTally = Partial<Record<FailureKind, number>>;

export interface Tallies {
  failedAttempts: AttemptTally;
  replicas: ReplicaTally;
}

export const noTallies = (): Tallies => ({ failedAttempts: {}, replicas: {} });

/** A copy of `from` (a heartbeat's, carried over to the next attempt), nothing shared with it. */
export const copyTallies = (from: Partial<Tallies> | undefined): Tallies => {
  const copy = noTallies();
  addTallies(copy, from);
  return copy;
};

/** Adds `more` (a slice's, a shard's; either part may be missing) into `into`. */
export function addTallies(into: Tallies, more: Partial<Tallies> | undefined): void {
  addCounts(into.failedAttempts, more?.failedAttempts ?? {});
  for (const [replica, counts] of Object.entries(more?.replicas ?? {})) addCounts((into.replicas[replica] ??= noReplicaCounts()), counts);
}
