/**
 * The small, secret-free JSON the build workflow and its activities exchange (which build, shard
 * and slice; what a committed shard reports back): what Temporal's history carries, never data.
 */
import type { Tallies } from '../domain/tallies.js';
import type { StageName } from '../config/stages.js';
import type { StageUsage, UnpricedUsage } from '../output/contracts/manifest.js';

/** What activities receive to find a build: small, secret-free JSON that is safe in workflow history. */
export interface BuildRef {
  buildId: string;
  output: string;
  s3: { endpoint?: string; region?: string; forcePathStyle?: boolean };
  configFingerprint: string;
}

export interface ShardTask {
  build: BuildRef;
  shard: number;
}

export interface SliceTask extends ShardTask {
  stage: StageName;
  /** Sample positions [from, to) in the shard plan. */
  from: number;
  to: number;
}

/** A slice through several stages in order (activities/index.ts, runSliceStages). */
export interface SliceStagesTask extends ShardTask {
  stages: StageName[];
  /** Sample positions [from, to) in the shard plan. */
  from: number;
  to: number;
}

/**
 * What a committed shard reports back to the build workflow (from its manifest), with the tallies of
 * its requests in the run that committed it (workflows/buildShard.ts), for the build's cumulative
 * counts.
 */
export interface ShardSummary extends Partial<Tallies> {
  shard: number;
  planned: number;
  instruct: number;
  dpo: number;
  rejectedSamples: number;
  rejectedPairs: number;
  rejectsByStage: Record<string, number>;
  rejectsByReason: Record<string, number>;
  usage: Record<string, StageUsage>;
  /** See ShardManifest.unpriced. */
  unpriced?: UnpricedUsage;
  simulated: boolean;
  /** From the manifest: see ShardManifest. */
  modelCallRejects: number;
  revision: number;
  revising?: number;
}

/** What committed shards kept and spent together: a summary without one shard's identity. */
export type ShardTotals = Omit<ShardSummary, 'shard' | 'revision' | 'revising'>;
