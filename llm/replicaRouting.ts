/**
 * Which replica of an endpoint serves a sample: all of a sample's requests go to the replica its
 * image's content hash ranks first by rendezvous hashing (highest random weight: each replica
 * scores sha256(replica URL, image hash), the highest wins), so the replica that already holds the
 * image's vision encoding and KV prefix gets it again, and adding or removing a replica moves only
 * the images it wins or won. A replica at its limit spills the request to the next in the image's
 * order; one that fails (connection refused, or a run of 5xx replies) is taken out for a back-off
 * that doubles per repeated failure, its samples going to their next replica, and comes back on its
 * own when the back-off ends. Pure apart from the injected clock; every move is counted for status.
 */
import { sha256Hex } from '../domain/hashing.js';
import type { Clock } from './clock.js';

/** 5xx replies in a row that take a replica out (one refused connection does at once). */
export const SERVER_ERROR_RUN = 3;
/** The first back-off of a failed replica; doubled per failure in a row, up to the cap. */
export const BACKOFF_MS = 5_000;
export const MAX_BACKOFF_MS = 120_000;

/** The replicas in the order an image tries them: its rendezvous ranking (ties, which sha256 makes unlikely, by URL). */
export function replicaOrder(imageSha256: string, replicas: readonly string[]): string[] {
  const scored = replicas.map((url) => ({ url, score: sha256Hex(`${url}\u0000${imageSha256}`) }));
  return scored.sort((a, b) => (a.score === b.score ? (a.url < b.url ? -1 : 1) : a.score < b.score ? 1 : -1)).map((s) => s.url);
}

export type ReplicaFailure = 'connect' | 'server-error';

/** A replica picked for a request: `moved` when it is not the image's first (that one at its limit, or out). */
export interface ReplicaPick {
  baseURL: string;
  moved?: 'spilled' | 'rerouted';
}

/** Counts per replica: requests routed to it, those it took as a spill or re-route, and times taken out. */
export interface ReplicaShare {
  baseURL: string;
  routed: number;
  spilledIn: number;
  reroutedIn: number;
  ejections: number;
  /** Set while the replica is out: when it comes back (ms since the epoch). */
  outUntil?: number;
}

interface ReplicaState extends ReplicaShare {
  serverErrorRun: number;
  failuresInRow: number;
}

export class ReplicaRouter {
  private readonly states = new Map<string, ReplicaState>();

  constructor(
    replicas: readonly string[],
    private readonly clock: Pick<Clock, 'now'>,
  ) {
    for (const baseURL of replicas) {
      this.states.set(baseURL, { baseURL, routed: 0, spilledIn: 0, reroutedIn: 0, ejections: 0, serverErrorRun: 0, failuresInRow: 0 });
    }
  }

  /**
   * The replica for one request of the sample whose image hashes to `imageSha256`, given whether
   * each replica is at its limit (its limiter's say: this worker's share, lease and window): the
   * first in the image's order that is in and below its limit. When every replica in is at its
   * limit, the image's first replica in (its limiter queues the request); when all are out, the
   * one back soonest.
   */
  pick(imageSha256: string, atLimit: (baseURL: string) => boolean): ReplicaPick {
    const now = this.clock.now();
    const order = replicaOrder(imageSha256, [...this.states.keys()]).map((url) => this.states.get(url)!);
    for (const s of order) if (s.outUntil !== undefined && s.outUntil <= now) s.outUntil = undefined;
    const inService = order.filter((s) => s.outUntil === undefined);
    const open = inService.find((s) => !atLimit(s.baseURL));
    const chosen = open ?? inService[0] ?? [...order].sort((a, b) => a.outUntil! - b.outUntil!)[0]!;
    chosen.routed++;
    if (chosen === order[0]) return { baseURL: chosen.baseURL };
    if (order[0]!.outUntil !== undefined) {
      chosen.reroutedIn++;
      return { baseURL: chosen.baseURL, moved: 'rerouted' };
    }
    chosen.spilledIn++;
    return { baseURL: chosen.baseURL, moved: 'spilled' };
  }

  /**
   * A request to `baseURL` failed: a refused connection takes it out at once, a 5xx once it is the
   * SERVER_ERROR_RUN-th in a row. True when this failure took it out.
   */
  failed(baseURL: string, failure: ReplicaFailure): boolean {
    const s = this.states.get(baseURL);
    if (!s || s.outUntil !== undefined) return false;
    if (failure === 'server-error' && ++s.serverErrorRun < SERVER_ERROR_RUN) return false;
    s.serverErrorRun = 0;
    s.ejections++;
    s.outUntil = this.clock.now() + Math.min(BACKOFF_MS * 2 ** s.failuresInRow, MAX_BACKOFF_MS);
    s.failuresInRow++;
    return true;
  }

  /** A request to `baseURL` got a reply: its run of failures ends. */
  succeeded(baseURL: string): void {
    const s = this.states.get(baseURL);
    if (!s) return;
    s.serverErrorRun = 0;
    s.failuresInRow = 0;
  }

  /** Each replica's counts, in config order. */
  shares(): ReplicaShare[] {
    const now = this.clock.now();
    return [...this.states.values()].map(({ baseURL, routed, spilledIn, reroutedIn, ejections, outUntil }) => ({
      baseURL,
      routed,
      spilledIn,
      reroutedIn,
      ejections,
      ...(outUntil !== undefined && outUntil > now ? { outUntil } : {}),
    }));
  }
}
