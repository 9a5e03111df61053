/**
 * Which replica of an endpoint serves a sample: all of a sample's requests go to one replica, so
 * its image is encoded and its KV prefix computed once. Its image's content hash ranks the replicas
 * by rendezvous hashing (highest random weight: each replica scores sha256(replica URL, image
 * hash), the highest wins), so adding or removing a replica moves only the images it wins or won.
 * The sample's first request places the image by bounded load: its first replica, or the next in
 * its order when that one is at its limit (a spill), or the least loaded when all are; its later
 * requests stay where it was placed, queueing there, and move only when that replica is taken out
 * (a re-route) for failing (a connection refused, or a run of 5xx replies or dropped connections): out for a back-off that
 * doubles per repeated failure, back on its own when it ends. Per worker; pure apart from the
 * injected clock.
 */
import { sha256Hex } from '../domain/hashing.js';
import type { Clock } from './clock.js';

/** Failures in a row (5xx replies, dropped connections) that take a replica out; one unreachable address does at once. */
export const FAILURE_RUN = 3;
/** The first back-off of a failed replica; doubled per failure in a row, up to the cap. */
export const BACKOFF_MS = 5_000;
export const MAX_BACKOFF_MS = 120_000;

/** The replicas in the order an image tries them: its rendezvous ranking (ties, which sha256 makes unlikely, by URL). */
export function replicaOrder(imageSha256: string, replicas: readonly string[]): string[] {
  const scored = replicas.map((url) => ({ url, score: sha256Hex(`${url}\u0000${imageSha256}`) }));
  return scored.sort((a, b) => (a.score === b.score ? (a.url < b.url ? -1 : 1) : a.score < b.score ? 1 : -1)).map((s) => s.url);
}

/**
 * `unreachable`: nothing listens at the address (refused, unknown host, TLS refused), so the replica
 * is down. `dropped`: a connection reset or closed before the reply, which a kept-alive connection
 * the server closed while idle also gives; like a 5xx, it says the replica is failing only in a run.
 */
export type ReplicaFailure = 'unreachable' | 'dropped' | 'server-error';

/** A replica picked for a request: `moved` when it is not the image's first (that one at its limit when the image was placed, or out). */
export interface ReplicaPick {
  baseURL: string;
  moved?: 'spilled' | 'rerouted';
}

/** Images (routing keys) a router remembers the replica of: the most recently routed, far more than a worker has samples in flight. */
export const PLACED_IMAGES = 16_384;

interface ReplicaState {
  baseURL: string;
  /** Set while the replica is out: when it comes back (ms since the epoch). */
  outUntil?: number;
  failureRun: number;
  failuresInRow: number;
}

export class ReplicaRouter {
  private readonly states = new Map<string, ReplicaState>();
  /** Where each image was placed, least recently routed first (a Map keeps insertion order). */
  private readonly placed = new Map<string, ReplicaPick>();

  constructor(
    replicas: readonly string[],
    private readonly clock: Pick<Clock, 'now'>,
    private readonly maxPlaced = PLACED_IMAGES,
  ) {
    for (const baseURL of replicas) this.states.set(baseURL, { baseURL, failureRun: 0, failuresInRow: 0 });
  }

  /**
   * The replica for one request of the sample whose image hashes to `imageSha256`. An image placed
   * before stays where it was placed (its encoding and prefix are there; a full replica's limiter
   * queues the request) while that replica is in. Otherwise it is placed now, by bounded load, given
   * each replica's load (its limiter's say: what it holds and queues over what it admits now, this
   * worker's share, lease and window; 1 or more is at its limit): on the first in the image's order
   * that is in and below its limit; when every replica in is at its limit, on the least loaded (the
   * image is encoded nowhere yet, so its order buys nothing there and balance is all); when all are
   * out, the one back soonest (not remembered: the image is placed again once one is back).
   */
  pick(imageSha256: string, loadOf: (baseURL: string) => number): ReplicaPick {
    const now = this.clock.now();
    for (const s of this.states.values()) if (s.outUntil !== undefined && s.outUntil <= now) s.outUntil = undefined;
    const held = this.placed.get(imageSha256);
    this.placed.delete(imageSha256);
    if (held && this.states.get(held.baseURL)!.outUntil === undefined) return this.remember(imageSha256, held);
    const order = replicaOrder(imageSha256, [...this.states.keys()]).map((url) => this.states.get(url)!);
    const inService = order.filter((s) => s.outUntil === undefined);
    const loads = new Map(inService.map((s) => [s, loadOf(s.baseURL)]));
    const chosen =
      inService.find((s) => loads.get(s)! < 1) ?? inService.reduce<ReplicaState | undefined>((least, s) => (least && loads.get(least)! <= loads.get(s)! ? least : s), undefined);
    if (!chosen) {
      const soonest = [...order].sort((a, b) => a.outUntil! - b.outUntil!)[0]!;
      return soonest === order[0] ? { baseURL: soonest.baseURL } : { baseURL: soonest.baseURL, moved: 'rerouted' };
    }
    if (chosen === order[0]) return this.remember(imageSha256, { baseURL: chosen.baseURL });
    return this.remember(imageSha256, { baseURL: chosen.baseURL, moved: order[0]!.outUntil === undefined ? 'spilled' : 'rerouted' });
  }

  private remember(imageSha256: string, pick: ReplicaPick): ReplicaPick {
    this.placed.set(imageSha256, pick);
    if (this.placed.size > this.maxPlaced) this.placed.delete(this.placed.keys().next().value!);
    return pick;
  }

  /**
   * A request to `baseURL` failed: an unreachable address takes it out at once, a 5xx or a dropped
   * connection once it is the FAILURE_RUN-th failure in a row. True when this failure took it out.
   */
  failed(baseURL: string, failure: ReplicaFailure): boolean {
    const s = this.states.get(baseURL);
    if (!s || s.outUntil !== undefined) return false;
    if (failure !== 'unreachable' && ++s.failureRun < FAILURE_RUN) return false;
    s.failureRun = 0;
    s.outUntil = this.clock.now() + Math.min(BACKOFF_MS * 2 ** s.failuresInRow, MAX_BACKOFF_MS);
    s.failuresInRow++;
    return true;
  }

  /** A request to `baseURL` got a reply: its run of failures ends. */
  succeeded(baseURL: string): void {
    const s = this.states.get(baseURL);
    if (!s) return;
    s.failureRun = 0;
    s.failuresInRow = 0;
  }
}
