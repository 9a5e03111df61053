/**
 * A whole build: validate the config, plan shards deterministically, run one child workflow per
 * shard (id `<buildId>/shard-<n>`) with bounded parallelism, then write the build report.
 *
 * A failed shard does not fail the build: it is listed in the report with its error. History stays
 * small because children carry the per-sample work; when Temporal suggests it, the workflow drains
 * the running shards and continues as new with its progress carried over.
 */
import {
  ApplicationFailure,
  condition,
  continueAsNew,
  defineQuery,
  executeChild,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type * as activities from '../activities/index.js';
import type { BuildRef, ShardSummary } from '../activities/buildRef.js';
import { ConfigError, parseBuildConfig, type BuildConfig } from '../config/buildConfig.js';
import type { BuildReport } from '../output/buildReport.js';
import type { BuildPlan } from '../pipeline/planBuild.js';
import { PIPELINE_ACTIVITY } from './activityOptions.js';
import { buildShard } from './buildShard.js';

const { planBuild, finalizeBuild } = proxyActivities<typeof activities>(PIPELINE_ACTIVITY);

/** Batches of one shard in flight at once: enough to overlap model latency, few enough to keep order. */
const PARALLEL_BATCHES_PER_SHARD = 4;

export interface BuildProgress {
  buildId: string;
  phase: 'planning' | 'running' | 'finalizing' | 'done';
  shards: { planned: number; running: number; committed: number; failed: number };
  samples: { planned: number; instruct: number; dpo: number; rejectedSamples: number; rejectedPairs: number };
  failedShards: Array<{ shard: number; error: string }>;
  simulated: boolean;
}

/** What a run hands to the next one when it continues as new. */
export interface CarriedProgress {
  plan: BuildPlan;
  nextShard: number;
  progress: BuildProgress;
}

export const progressQuery = defineQuery<BuildProgress>('progress');

export async function buildDataset(input: unknown, carried?: CarriedProgress): Promise<BuildReport> {
  const config = validate(input);
  const progress: BuildProgress = carried?.progress ?? {
    buildId: config.buildId,
    phase: 'planning',
    shards: { planned: 0, running: 0, committed: 0, failed: 0 },
    samples: { planned: 0, instruct: 0, dpo: 0, rejectedSamples: 0, rejectedPairs: 0 },
    failedShards: [],
    simulated: false,
  };
  setHandler(progressQuery, () => progress);

  const plan = carried?.plan ?? (await planBuild(config));
  progress.phase = 'running';
  progress.shards.planned = plan.shardCount;
  progress.samples.planned = plan.sampleCount;
  const build: BuildRef = { buildId: config.buildId, output: config.output, s3: config.s3, configFingerprint: plan.configFingerprint };

  let nextShard = carried?.nextShard ?? 0;
  const startedHere = nextShard;
  const shouldRollOver = () => workflowInfo().continueAsNewSuggested || nextShard - startedHere >= config.shardsPerRun;

  while (nextShard < plan.shardCount && !shouldRollOver()) {
    await condition(() => progress.shards.running < config.maxParallelShards);
    if (shouldRollOver()) break;
    void runShard(config, build, plan, nextShard++, progress);
  }
  await condition(() => progress.shards.running === 0);
  if (nextShard < plan.shardCount) {
    await continueAsNew<typeof buildDataset>(input, { plan, nextShard, progress });
  }

  progress.phase = 'finalizing';
  const report = await finalizeBuild({ build, shardCount: plan.shardCount, failed: progress.failedShards });
  progress.phase = 'done';
  return report;
}

function validate(input: unknown): BuildConfig {
  try {
    return parseBuildConfig(input);
  } catch (err) {
    if (err instanceof ConfigError) throw ApplicationFailure.nonRetryable(err.message, 'ConfigError');
    throw err;
  }
}

async function runShard(config: BuildConfig, build: BuildRef, plan: BuildPlan, shard: number, progress: BuildProgress): Promise<void> {
  progress.shards.running += 1;
  try {
    const summary: ShardSummary = await executeChild(buildShard, {
      workflowId: `${config.buildId}/shard-${shard}`,
      args: [
        {
          build,
          shard,
          sampleCount: Math.min(config.shardSize, plan.sampleCount - shard * config.shardSize),
          batchSize: config.batchSize,
          parallelBatches: PARALLEL_BATCHES_PER_SHARD,
        },
      ],
    });
    progress.shards.committed += 1;
    progress.simulated ||= summary.simulated;
    progress.samples.instruct += summary.instruct;
    progress.samples.dpo += summary.dpo;
    progress.samples.rejectedSamples += summary.rejectedSamples;
    progress.samples.rejectedPairs += summary.rejectedPairs;
  } catch (err) {
    progress.shards.failed += 1;
    progress.failedShards.push({ shard, error: describeFailure(err) });
  } finally {
    progress.shards.running -= 1;
  }
}

/** The innermost cause: "child failed: activity failed: <what actually went wrong>" helps nobody. */
function describeFailure(err: unknown): string {
  let e = err as { message?: string; cause?: unknown } | undefined;
  while (e?.cause) e = e.cause as typeof e;
  return e?.message ?? String(err);
}
