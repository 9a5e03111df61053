/**
 * A build's progress with its running shards' live counters: the `shardProgress` query of each
 * shard the build's progress says is running (workflows/shardProgress.ts), so the samples are
 * counted as their stages finish, not only when a shard commits. To each shard's failed attempts
 * are added those its slices still running report in their heartbeats (activities/sliceHeartbeat.ts):
 * a slice whose calls fail (an endpoint that is down) counts them there while Temporal retries it,
 * long before it returns an outcome. A slice running all its stages in one activity (runSliceStages)
 * heartbeats its samples through each stage and its requests too: they are added the same way.
 */
import type { WorkflowClient, WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { sliceHeartbeat, type SliceHeartbeat } from '../activities/sliceHeartbeat.js';
import type { StageName } from '../domain/stages.js';
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
  const [shard, running] = await Promise.all([handle.query<ShardProgress>('shardProgress'), runningSlices(handle)]);
  const failedAttempts: AttemptTally = { ...shard.failedAttempts };
  const stages = { ...shard.stages };
  for (const beat of running) {
    addTally(failedAttempts, beat.failedAttempts);
    for (const [stage, n] of Object.entries(beat.stages ?? {}) as Array<[StageName, number]>) stages[stage] = (stages[stage] ?? 0) + n;
  }
  const requests = shard.requests + running.reduce((sum, beat) => sum + (beat.requests ?? 0), 0);
  return { ...shard, stages, requests, failedAttempts };
}

/** What the shard's running slices last heartbeated; none when it cannot be described. */
async function runningSlices(handle: WorkflowHandle): Promise<SliceHeartbeat[]> {
  const description = await handle.describe().catch(() => undefined);
  const beats: SliceHeartbeat[] = [];
  for (const activity of description?.raw.pendingActivities ?? []) {
    const payload = activity.heartbeatDetails?.payloads?.[0];
    const beat = payload ? sliceHeartbeat(defaultPayloadConverter.fromPayload(payload)) : undefined;
    if (beat) beats.push(beat);
  }
  return beats;
}
