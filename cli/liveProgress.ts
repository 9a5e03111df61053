/**
 * A build's progress with its running shards' live counters: the `shardProgress` query of each
 * shard the build's progress says is running (workflows/shardProgress.ts), so the samples are
 * counted as their stages finish, not only when a shard commits. To each shard's failed attempts
 * are added those its slices still running report in their heartbeats (activities/sliceHeartbeat.ts):
 * a slice whose calls fail (an endpoint that is down) counts them there while Temporal retries it,
 * long before it returns an outcome.
 */
import type { WorkflowClient, WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { sliceHeartbeat } from '../activities/sliceHeartbeat.js';
import { addTally, type AttemptTally } from '../llm/attemptTally.js';
import type { BuildProgress } from '../workflows/buildProgress.js';
import type { ShardProgress } from '../workflows/shardProgress.js';

export interface LiveProgress extends BuildProgress {
  /** The running shards that answered (one may close between the two queries: it is then committed, or failed). */
  shardsLive: ShardProgress[];
}

export async function withRunningShards(workflows: WorkflowClient, progress: BuildProgress): Promise<LiveProgress> {
  const answers = await Promise.all((progress.runningShards ?? []).map((id) => liveShard(workflows.getHandle(id)).catch(() => undefined)));
  return { ...progress, shardsLive: answers.filter((a): a is ShardProgress => a !== undefined) };
}

async function liveShard(handle: WorkflowHandle): Promise<ShardProgress> {
  const [shard, running] = await Promise.all([handle.query<ShardProgress>('shardProgress'), runningSliceFailures(handle)]);
  const failedAttempts: AttemptTally = { ...shard.failedAttempts };
  addTally(failedAttempts, running);
  return { ...shard, failedAttempts };
}

/** The failed attempts the shard's running slices last heartbeated; none when it cannot be described. */
async function runningSliceFailures(handle: WorkflowHandle): Promise<AttemptTally> {
  const description = await handle.describe().catch(() => undefined);
  const total: AttemptTally = {};
  for (const activity of description?.raw.pendingActivities ?? []) {
    const payload = activity.heartbeatDetails?.payloads?.[0];
    const beat = payload ? sliceHeartbeat(defaultPayloadConverter.fromPayload(payload)) : undefined;
    if (beat) addTally(total, beat.failedAttempts);
  }
  return total;
}
