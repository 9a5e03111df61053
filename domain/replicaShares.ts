/**
 * Replica shares: per replica of an endpoint with several (keyed by its metric label, scheme, host
 * and path: telemetry/metrics.ts endpointLabel), the attempts routed to it, those of them it took as
 * a spill (the image's first replica at its limit when it was placed) or a re-route (that one out),
 * and the times it was taken out (llm/replicaRouting.ts). Counted per slice on the worker with the
 * failed attempts (domain/tallies.ts), added up with them, listed in `mmif status`, the build
 * report and the dataset card. Pure, for the workflow bundle.
 */

export type ReplicaCounts = {
  routed: number;
  spilled: number;
  rerouted: number;
  ejections: number;
};

export type ReplicaTally = Record<string, ReplicaCounts>;

export const noReplicaCounts = (): ReplicaCounts => ({ routed: 0, spilled: 0, rerouted: 0, ejections: 0 });

/** A replica's counts with its share of all attempts routed (0..1), in the order given. */
export interface ReplicaShare extends ReplicaCounts {
  replica: string;
  share: number;
}

export function replicaShares(tally: ReplicaTally): ReplicaShare[] {
  const total = Object.values(tally).reduce((n, c) => n + c.routed, 0);
  return Object.entries(tally)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([replica, c]) => ({ replica, ...c, share: total > 0 ? c.routed / total : 0 }));
}

/** One line for people: each replica's share and what moved (`status`, the card). */
export function replicaSharesLine(shares: readonly ReplicaShare[]): string {
  return shares
    .map((s) => {
      const moved = [s.spilled && `${s.spilled} spilled in`, s.rerouted && `${s.rerouted} re-routed in`, s.ejections && `taken out ${s.ejections}x`].filter(Boolean);
      return `${s.replica} ${(s.share * 100).toFixed(1)}% (${s.routed} routed${moved.length ? `, ${moved.join(', ')}` : ''})`;
    })
    .join('; ');
}
