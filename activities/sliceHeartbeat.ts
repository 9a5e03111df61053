/**
 * What a slice's activity heartbeats (activities/index.ts, runStageSlice and runSliceStages): its
 * tallies so far (failed attempts by kind, replicas), and (a slice through several stages) the
 * samples through each stage, the requests sent so far and, while samples wait for lanes, its place
 * in line. Read back by the slice's next attempt (the tallies), and by `mmif status` from the shard workflow's pending activities (cli/liveProgress.ts) while the
 * slice runs or Temporal retries it.
 */
import { sampleFates, type StageName } from '../config/stages.js';
import { noReplicaCounts, type ReplicaTally } from '../domain/replicaShares.js';
import type { Tallies } from '../domain/tallies.js';
import type { SliceStagesOutcome } from '../pipeline/run/runStage.js';
import type { LinePlace } from './sliceWatchdog.js';

/** Its tallies so far (domain/tallies.ts: failed attempts, replicas), carried over to the slice's next attempt. */
export interface SliceHeartbeat extends Tallies {
  /** Samples through each stage so far (rejected or blocked ones included, as in ShardProgress.stages). */
  stages?: Partial<Record<StageName, number>>;
  requests?: number;
  /** Its samples accepted and rejected so far (config/stages.ts sampleFates). */
  accepted?: number;
  rejected?: number;
  /** When this attempt started (ms since the epoch, the worker's clock): its requests over the time since are its request rate. */
  startedAt?: number;
  /** Samples of other slices waiting ahead of its first waiting one, and its own still waiting (LanePool.place): for the UI and `temporal activity describe`, not read back. */
  line?: LinePlace;
}

/** A running slice's samples through each stage, their fates by the build's stages in order (`order`), and its requests so far. */
export function throughStages(outcome: SliceStagesOutcome, order: readonly StageName[]): Required<Pick<SliceHeartbeat, 'stages' | 'requests' | 'accepted' | 'rejected'>> {
  const stages: Partial<Record<StageName, number>> = {};
  let requests = 0;
  for (const [stage, o] of Object.entries(outcome.stages) as Array<[StageName, NonNullable<SliceStagesOutcome['stages'][StageName]>]>) {
    stages[stage] = o.ok + o.rejected + o.blocked;
    requests += o.requests ?? 0;
  }
  return { stages, requests, ...sampleFates(outcome.stages, order) };
}

/** `details` as a slice's heartbeat, or undefined when it is none (no heartbeat yet, another activity's). */
export function sliceHeartbeat(details: unknown): SliceHeartbeat | undefined {
  if (typeof details !== 'object' || details === null) return undefined;
  const { failedAttempts: tally, stages, replicas, ...numbers } = details as { failedAttempts?: unknown; stages?: unknown; replicas?: unknown } & Record<string, unknown>;
  if (typeof tally !== 'object' || tally === null) return undefined;
  const beat: SliceHeartbeat = { failedAttempts: counts(tally), replicas: typeof replicas === 'object' && replicas !== null ? replicaTally(replicas) : {} };
  if (typeof stages === 'object' && stages !== null) beat.stages = counts(stages);
  for (const field of ['requests', 'accepted', 'rejected', 'startedAt'] as const) {
    const n = numbers[field];
    if (typeof n === 'number') beat[field] = n;
  }
  return beat;
}

/** The replicas' counts in `record`, each a whole ReplicaCounts (missing counts 0). */
function replicaTally(record: object): ReplicaTally {
  const out: ReplicaTally = {};
  for (const [replica, c] of Object.entries(record)) if (typeof c === 'object' && c !== null) out[replica] = { ...noReplicaCounts(), ...counts(c) };
  return out;
}

/** The numeric entries of `record`. */
function counts<K extends string>(record: object): Partial<Record<K, number>> {
  const out: Partial<Record<K, number>> = {};
  for (const [key, n] of Object.entries(record)) if (typeof n === 'number') out[key as K] = n;
  return out;
}
