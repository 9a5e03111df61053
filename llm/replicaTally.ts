/**
 * How the model requests made under the work in progress (a stage's slice) spread over the
 * replicas of their endpoints: per replica, the attempts routed to it, those of them it took as a
 * spill (the image's first replica at its limit) or a re-route (that one out), and the times it was
 * taken out. What `mmif status`, the build report and the dataset card show as replica shares.
 * Carried implicitly beside the attempt tally (attemptTally.ts), for the same reason: one cached
 * ModelCaller serves many slices at once. Replicas are named by their metric label (scheme, host,
 * path: telemetry/metrics.ts endpointLabel), never with credentials or a query.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { endpointLabel } from '../telemetry/metrics.js';

export interface ReplicaCounts {
  routed: number;
  spilled: number;
  rerouted: number;
  ejections: number;
}

export type ReplicaTally = Record<string, ReplicaCounts>;

const current = new AsyncLocalStorage<ReplicaTally>();

/** Runs `work` counting into `tally` where the attempts of every request it makes go. */
export function withReplicaTally<T>(tally: ReplicaTally, work: () => Promise<T>): Promise<T> {
  return current.run(tally, work);
}

const zero = (): ReplicaCounts => ({ routed: 0, spilled: 0, rerouted: 0, ejections: 0 });

/** One attempt routed to `baseURL` (moved there, or not), or the replica taken out. */
export function tallyReplica(baseURL: string, event: 'spilled' | 'rerouted' | 'ejected' | undefined): void {
  const tally = current.getStore();
  if (!tally) return;
  const counts = (tally[endpointLabel(baseURL)] ??= zero());
  if (event === 'ejected') counts.ejections++;
  else {
    counts.routed++;
    if (event) counts[event]++;
  }
}

/** Adds `more` into `into`. */
export function addReplicaTally(into: ReplicaTally, more: ReplicaTally): void {
  for (const [replica, counts] of Object.entries(more)) {
    const sum = (into[replica] ??= zero());
    for (const k of Object.keys(sum) as Array<keyof ReplicaCounts>) sum[k] += counts[k] ?? 0;
  }
}
