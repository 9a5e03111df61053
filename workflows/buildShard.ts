/**
 * One shard: each batch of samples goes through the five stages in order (batches run in
 * parallel), then the shard is committed. Only keys and counts cross Temporal; a committed shard
 * returns at once, so re-running a build costs no model call for it.
 */
import { proxyActivities } from '@temporalio/workflow';
import type * as activities from '../activities/index.js';
import type { ShardSummary, ShardTask } from '../activities/buildRef.js';
import { mapLimit } from '../domain/mapLimit.js';
import { STAGE_NAMES } from '../pipeline/stageState.js';
import { pipelineActivityOptions, type RetrySettings } from './activityOptions.js';

export interface BuildShardInput extends ShardTask {
  sampleCount: number;
  batchSize: number;
  /** Batches of this shard in flight at once. */
  parallelBatches: number;
  retry: RetrySettings;
}

export async function buildShard(input: BuildShardInput): Promise<ShardSummary> {
  const { runStageBatch, commitShard, committedShard } = proxyActivities<typeof activities>(pipelineActivityOptions(input.retry));
  const { build, shard } = input;
  const committed = await committedShard({ build, shard });
  if (committed) return committed;

  const batches: Array<[number, number]> = [];
  for (let from = 0; from < input.sampleCount; from += input.batchSize) {
    batches.push([from, Math.min(from + input.batchSize, input.sampleCount)]);
  }
  await mapLimit(batches, input.parallelBatches, async ([from, to]) => {
    for (const stage of STAGE_NAMES) await runStageBatch({ build, shard, stage, from, to });
  });
  return commitShard({ build, shard });
}
