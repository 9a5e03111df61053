/**
 * A build's progress with its running shards' live counters: the `shardProgress` query of each
 * shard the build's progress says is running (workflows/shardProgress.ts), so the samples are
 * counted as their stages finish, not only when a shard commits.
 */
import type { WorkflowClient } from '@temporalio/client';
import type { BuildProgress } from '../workflows/buildProgress.js';
import type { ShardProgress } from '../workflows/shardProgress.js';

export interface LiveProgress extends BuildProgress {
  /** The running shards that answered (one may close between the two queries: it is then committed, or failed). */
  shardsLive: ShardProgress[];
}

export async function withRunningShards(workflows: WorkflowClient, progress: BuildProgress): Promise<LiveProgress> {
  const answers = await Promise.all(
    (progress.runningShards ?? []).map((id) =>
      workflows
        .getHandle(id)
        .query<ShardProgress>('shardProgress')
        .catch(() => undefined),
    ),
  );
  return { ...progress, shardsLive: answers.filter((a): a is ShardProgress => a !== undefined) };
}
