/**
 * The tallies (domain/tallies.ts) of the work in progress, a stage's slice: what its model requests
 * count as they go, their failed attempts by kind and where their attempts went among replicas.
 * Carried implicitly, like the abort signal (abortScope.ts), because one cached ModelCaller serves
 * many slices at once: the slice sets its tallies once (pipeline/run/runStage.ts) and the request
 * path (sendCompletion.ts, replicaRoute.ts) counts into them. Replicas are named by their metric
 * label (scheme, host, path: telemetry/metrics.ts endpointLabel), never with credentials or a query.
 */
import { noReplicaCounts } from '../domain/replicaShares.js';
import type { Tallies } from '../domain/tallies.js';
import { endpointLabel } from '../telemetry/metrics.js';
import type { FailureKind } from '../domain/failureKind.js';
import { ScopedValue } from './workScope.js';

const current = new ScopedValue<Tallies>();

/** Runs `work` counting into `tallies` what every request it makes meets. */
export function withTallies<T>(tallies: Tallies, work: () => Promise<T>): Promise<T> {
  return current.run(tallies, work);
}

/** One failed attempt, of `kind`. */
export function tallyFailedAttempt(kind: FailureKind): void {
  const tallies = current.get();
  if (tallies) tallies.failedAttempts[kind] = (tallies.failedAttempts[kind] ?? 0) + 1;
}

/** One attempt routed to `baseURL` (moved there, or not), or the replica taken out. */
export function tallyReplica(baseURL: string, event: 'spilled' | 'rerouted' | 'ejected' | undefined): void {
  const tallies = current.get();
  if (!tallies) return;
  const counts = (tallies.replicas[endpointLabel(baseURL)] ??= noReplicaCounts());
  if (event === 'ejected') counts.ejections++;
  else {
    counts.routed++;
    if (event) counts[event]++;
  }
}
