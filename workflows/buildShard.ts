/**
 * One shard: each slice of samples goes through the stages in order (five single-turn ones, or the
 * four of a multiturn build; slices run in parallel, and within a slice each sample goes through
 * the stages on its own), then the shard is committed. Only keys and counts cross Temporal; a committed shard
 * returns at once, so re-running a build costs no model call for it — unless it holds samples
 * rejected by model-call errors and `rerunModelCallRejects` is set: then the stages run again (every
 * sample with a final state is skipped, only those rejections are tried again) and the shard is
 * committed again as its next revision.
 */
import { defineQuery, proxyActivities, setHandler } from '@temporalio/workflow';
import type * as activities from '../activities/index.js';
import type { ShardSummary, ShardTask } from '../activities/buildRef.js';
import { mapLimit } from '../domain/mapLimit.js';
import { reopensOnRerun } from '../output/commit/manifest.js';
import type { BuildConfig } from '../config/buildConfig.js';
import type { BatchableStage } from '../config/endpointRouting.js';
import type { Tallies } from '../domain/tallies.js';
import type { StageName } from '../config/stages.js';
import { pipelineActivityOptions, sliceStagesActivityOptions, type RetrySettings } from './activityOptions.js';
import { newShardProgress, recordSlice, recordSliceStages, type ShardProgress } from './shardProgress.js';

export interface BuildShardInput extends ShardTask {
  sampleCount: number;
  sliceSize: number;
  /** Slices of this shard in flight at once. */
  parallelSlices: number;
  retry: RetrySettings;
  /** Stages whose first call goes through the Batch API, and how to wait for it. */
  batchStages: BatchableStage[];
  batchApi: BuildConfig['batchApi'];
  /** Stages routed to an endpoint's own task queue. */
  stageTaskQueues: Partial<Record<StageName, string>>;
  /** Run the stages only: the build commits the shard (targets: in rank order, with caps). */
  deferCommit: boolean;
  /** llm.rerunModelCallRejects (never with targets). */
  rerunModelCallRejects: boolean;
  /** The stages to run, in order (config/stages.ts stagesFor the build's mode). */
  stages: StageName[];
}

/** The first wait for a batch; later polls back off by half again, up to batchApi.pollSeconds. */
const FIRST_POLL_MS = 2_000;

/**
 * A batch may take the provider's whole 24-hour completion window (then it ends `expired`, which
 * is done): the waiting activity outlives the pipeline's 30-minute limit, and its heartbeat still
 * notices a lost worker within seconds.
 */
const BATCH_WAIT_TIMEOUT = '25 hours';

/** The shard's live counters (workflows/shardProgress.ts). */
export const shardProgressQuery = defineQuery<ShardProgress>('shardProgress');

/** A shard run whose commit `deferCommit` leaves to the build: the tallies of the run, which the build's commit does not know. */
export interface DeferredShard extends Tallies {
  deferred: true;
}

/** The shard's summary once committed, with this run's tallies; only the tallies when `deferCommit` leaves the commit to the build. */
export async function buildShard(input: BuildShardInput): Promise<ShardSummary | DeferredShard> {
  const options = pipelineActivityOptions(input.retry);
  const acts = proxyActivities<typeof activities>(options);
  const stageActs = (stage: StageName) => {
    const taskQueue = input.stageTaskQueues[stage];
    return taskQueue ? proxyActivities<typeof activities>({ ...options, taskQueue }) : acts;
  };
  const { build, shard } = input;
  const { stages } = input;
  const live = newShardProgress(shard, input.sampleCount, stages, Date.now());
  setHandler(shardProgressQuery, () => live);
  const committed = await acts.committedShard({ build, shard });
  if (committed && !reopensOnRerun(committed, input.rerunModelCallRejects)) return committed;

  const slices: Array<[number, number]> = [];
  for (let from = 0; from < input.sampleCount; from += input.sliceSize) {
    slices.push([from, Math.min(from + input.sliceSize, input.sampleCount)]);
  }
  if (input.batchStages.length === 0) {
    // Each sample flows through the stages on its own, within one activity per slice and run of
    // stages on one task queue: no stage waits for the slice's slowest sample, and a lane whose
    // sample ended takes the next waiting one of any slice or shard (pipeline/run/lanePool.ts).
    const runs = taskQueueRuns(stages, input.stageTaskQueues);
    await mapLimit(slices, input.parallelSlices, async ([from, to]) => {
      for (const run of runs) {
        const flowActs = proxyActivities<typeof activities>({
          ...sliceStagesActivityOptions(input.retry, run.stages.length),
          ...(run.taskQueue ? { taskQueue: run.taskQueue } : {}),
        });
        const outcome = await flowActs.runSliceStages({ build, shard, stages: run.stages, from, to });
        recordSliceStages(live, to - from, outcome, Date.now());
      }
    });
  } else {
    // The Batch API needs a whole stage's requests at once: the shard goes stage by stage.
    for (const stage of stages) {
      const batched = input.batchStages.find((s) => s === stage);
      if (batched) await throughBatchApi(acts, input, batched);
      await mapLimit(slices, input.parallelSlices, async ([from, to]) => {
        const outcome = await stageActs(stage).runStageSlice({ build, shard, stage, from, to });
        recordSlice(live, stage, to - from, outcome, Date.now());
      });
    }
  }
  if (input.deferCommit) return { deferred: true, failedAttempts: live.failedAttempts, replicas: live.replicas };
  const summary = await acts.commitShard({ build, shard, ...(committed ? { replacesRevision: committed.revision } : {}) });
  return { ...summary, failedAttempts: live.failedAttempts, replicas: live.replicas };
}

/** The stages in order, cut into runs of consecutive stages on the same task queue (undefined: the build's own). */
export function taskQueueRuns(stages: readonly StageName[], taskQueues: Partial<Record<StageName, string>>): Array<{ stages: StageName[]; taskQueue?: string }> {
  const runs: Array<{ stages: StageName[]; taskQueue?: string }> = [];
  for (const stage of stages) {
    const taskQueue = taskQueues[stage];
    const last = runs.at(-1);
    if (last && last.taskQueue === taskQueue) last.stages.push(stage);
    else runs.push({ stages: [stage], ...(taskQueue ? { taskQueue } : {}) });
  }
  return runs;
}

/**
 * Submits the stage's first calls, waits for each batch in one heartbeating activity (a lost worker
 * is noticed, a restart changes nothing), collects the replies into the cache, and resubmits failed
 * or expired lines; what is still missing after the last resubmission is made synchronously by the
 * stage itself. The activities' `round` input is the resubmission's number (0: the first submission).
 */
async function throughBatchApi(acts: ReturnType<typeof proxyActivities<typeof activities>>, input: BuildShardInput, stage: BatchableStage): Promise<void> {
  const { build, shard } = input;
  const waiting = proxyActivities<typeof activities>({ ...pipelineActivityOptions(input.retry), startToCloseTimeout: BATCH_WAIT_TIMEOUT });
  let only: string[] | undefined;
  for (let resubmission = 0; resubmission <= input.batchApi.maxResubmits; resubmission++) {
    const { batchIds } = await acts.submitStageBatch({ build, shard, stage, round: resubmission, only });
    if (batchIds.length === 0) return;
    for (const batchId of batchIds) {
      await waiting.awaitStageBatch({ build, stage, batchId, firstPollMs: FIRST_POLL_MS, maxPollMs: input.batchApi.pollSeconds * 1000 });
    }
    const { retry } = await acts.collectStageBatch({ build, shard, stage, round: resubmission });
    if (retry.length === 0) return;
    only = retry;
  }
}
