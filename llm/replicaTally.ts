/**
 * How the model requests made under the work in progress (a stage's slice) spread over the
 * replicas of endpoints with several (domain/replicaShares.ts: routed, spilled, re-routed, taken
 * out). Carried implicitly beside the attempt tally (attemptTally.ts), for the same reason: one
 * cached ModelCaller serves many slices at once. Replicas are named by their metric label (scheme,
 * host, path: telemetry/metrics.ts endpointLabel), never with credentials or a query.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { endpointLabel } from '../telemetry/metrics.js';
import { noReplicaCounts, type ReplicaTally } from '../domain/replicaShares.js';

const current = new AsyncLocalStorage<ReplicaTally>();

/** Runs `work` counting into `tally` where the attempts of every request it makes go. */
export function withReplicaTally<T>(tally: ReplicaTally, work: () => Promise<T>): Promise<T> {
  return current.run(tally, work);
}

/** One attempt routed to `baseURL` (moved there, or not), or the replica taken out. */
export function tallyReplica(baseURL: string, event: 'spilled' | 'rerouted' | 'ejected' | undefined): void {
  const tally = current.getStore();
  if (!tally) return;
  const counts = (tally[endpointLabel(baseURL)] ??= noReplicaCounts());
  if (event === 'ejected') counts.ejections++;
  else {
    counts.routed++;
    if (event) counts[event]++;
  }
}
