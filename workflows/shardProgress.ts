/**
 * A running shard's live counters, as its `shardProgress` query returns them: samples through each
 * stage as its slices finish (not only when the shard commits), the model requests its slices sent
 * and their failed attempts by kind (429s, 5xx and timeouts retried, refusals...). Pure: updated
 * from each slice's outcome.
 */
import { sampleFates, type StageName } from '../config/stages.js';
import { addTallies, noTallies, type Tallies } from '../domain/tallies.js';
import type { SliceOutcome, SliceStagesOutcome } from '../pipeline/run/runStage.js';

/** Its tallies (domain/tallies.ts): the failed attempts of its slices' requests and where they went among replicas. */
export interface ShardProgress extends Tallies {
  shard: number;
  samples: number;
  /** Samples through each stage: a sample an earlier stage rejected counts too (nothing is left to do for it). */
  stages: Partial<Record<StageName, number>>;
  /** The stages in order, the last one meaning done. */
  order: StageName[];
  /** Samples through every stage and accepted, and samples a stage rejected, as their slices end (sampleFates). */
  accepted: number;
  rejected: number;
  requests: number;
  /** (workflow time ms, requests so far) at the end of each of the last slices: the recent request rate. */
  recent: Array<[number, number]>;
}

/** Slice ends kept for the request rate. */
const RECENT_SLICES = 32;

export function newShardProgress(shard: number, samples: number, order: readonly StageName[], now: number): ShardProgress {
  return { shard, samples, stages: {}, order: [...order], accepted: 0, rejected: 0, requests: 0, ...noTallies(), recent: [[now, 0]] };
}

export function recordSlice(p: ShardProgress, stage: StageName, samples: number, outcome: SliceOutcome, now: number): void {
  recordSliceStages(p, samples, { stages: { [stage]: outcome }, failedAttempts: outcome.failedAttempts, replicas: outcome.replicas }, now);
}

/** A slice's outcome through one stage or several (runSliceStages). */
export function recordSliceStages(p: ShardProgress, samples: number, outcome: Pick<SliceStagesOutcome, 'stages'> & Partial<Tallies>, now: number): void {
  for (const [stage, o] of Object.entries(outcome.stages) as Array<[StageName, SliceOutcome]>) {
    p.stages[stage] = (p.stages[stage] ?? 0) + samples;
    p.requests += o.requests;
  }
  addTallies(p, outcome);
  const fates = sampleFates(outcome.stages, p.order);
  p.accepted += fates.accepted;
  p.rejected += fates.rejected;
  p.recent.push([now, p.requests]);
  if (p.recent.length > RECENT_SLICES) p.recent.shift();
}

/** Requests per second over the last `windowMs` of slice ends (from the first point inside it, or the oldest kept), up to `now`. */
export function requestRate(p: ShardProgress, now: number, windowMs = 60_000): number {
  const from = p.recent.find(([t]) => now - t <= windowMs) ?? p.recent.at(-1)!;
  const seconds = (now - from[0]) / 1000;
  return seconds > 0 ? (p.requests - from[1]) / seconds : 0;
}
