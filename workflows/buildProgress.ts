/** The live state of a build, as the `progress` query returns it. Pure: updated from shard summaries. */
import type { ShardTotals } from '../activities/buildRef.js';
import { addCounts } from '../domain/counts.js';
import { addUnpriced, addUsage, emptyUsage } from '../output/commit/manifest.js';
import type { StageUsage, UnpricedUsage } from '../output/contracts/manifest.js';
import { addTallies, noTallies, type Tallies } from '../domain/tallies.js';

export type BuildPhase = 'planning' | 'running' | 'waiting-for-retry' | 'finalizing' | 'done' | 'failed' | 'cancelled';

/** Its tallies (domain/tallies.ts) are those of the shards committed in this build's runs: with the running shards' live ones, counts that never go down. */
export interface BuildProgress extends Tallies {
  buildId: string;
  phase: BuildPhase;
  shards: { planned: number; running: number; committed: number; failed: number };
  samples: { planned: number; instruct: number; dpo: number; rejectedSamples: number; rejectedPairs: number };
  rejections: { byStage: Record<string, number>; byReason: Record<string, number> };
  /** Requests, cache hits, tokens and estimated cost per stage, over committed shards. */
  usage: Record<string, StageUsage>;
  /** Paid requests of models no price is known for, by model (absent while there are none). */
  unpriced?: UnpricedUsage;
  /** Milliseconds since the epoch (workflow time) when the build started; survives continue-as-new. */
  startedAt: number;
  /**
   * (workflow time ms, samples done) when this run's shards started (restartRate), after the shards
   * a resume found done: the running shards' samples are counted as their stages finish, so the rate
   * and ETA (cli/progressView.ts sampleRate) are taken from here, where no shard was running yet, to
   * now; neither planning, a wait for a retry, nor samples done before enter them.
   */
  runStart: [number, number];
  /** The workflow ids of the shards running now, whose `shardProgress` query tells their stages (cli/commands/status.ts). */
  runningShards: string[];
  /** The requests per second the build's endpoints allow together, when each sets `requestsPerMinute`. */
  requestsPerSecondLimit?: number;
  failedShards: Array<{ shard: number; error: string }>;
  simulated: boolean;
  /** Set when the build's hard budget (llm.budget) ran out: the one line the build fails with. */
  budgetExhausted?: string;
}

export function newProgress(buildId: string, now: number): BuildProgress {
  return {
    buildId,
    phase: 'planning',
    shards: { planned: 0, running: 0, committed: 0, failed: 0 },
    samples: { planned: 0, instruct: 0, dpo: 0, rejectedSamples: 0, rejectedPairs: 0 },
    rejections: { byStage: {}, byReason: {} },
    usage: {},
    startedAt: now,
    runStart: [now, 0],
    ...noTallies(),
    runningShards: [],
    failedShards: [],
    simulated: false,
  };
}

/** Adds a committed shard — or, with `shards` > 1, the sum of several found committed on resume. */
export function recordCommittedShard(progress: BuildProgress, summary: ShardTotals, shards = 1): void {
  progress.shards.committed += shards;
  progress.simulated ||= summary.simulated;
  const s = progress.samples;
  s.instruct += summary.instruct;
  s.dpo += summary.dpo;
  s.rejectedSamples += summary.rejectedSamples;
  s.rejectedPairs += summary.rejectedPairs;
  addCounts(progress.rejections.byStage, summary.rejectsByStage);
  addCounts(progress.rejections.byReason, summary.rejectsByReason);
  for (const [stage, u] of Object.entries(summary.usage)) addUsage((progress.usage[stage] ??= emptyUsage()), u);
  if (summary.unpriced) addUnpriced((progress.unpriced ??= {}), summary.unpriced);
  addTallies(progress, summary);
}

/** Samples of committed shards done: accepted (held-out ones not among them) or rejected. */
export const samplesDone = (p: BuildProgress) => p.samples.instruct + p.samples.rejectedSamples;

/**
 * Shards start (or start again, on a retry of failed ones): the rate restarts here, so the time
 * spent planning or waiting for the retry does not dilute it.
 */
export function restartRate(progress: BuildProgress, now: number): void {
  progress.runStart = [now, samplesDone(progress)];
}
