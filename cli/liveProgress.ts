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
import type { StageName } from '../config/stages.js';
import { causeChain } from '../domain/causeChain.js';
import { addTallies, copyTallies } from '../domain/tallies.js';
import type { BuildProgress } from '../workflows/buildProgress.js';
import { requestRate, type ShardProgress } from '../workflows/shardProgress.js';
import { oneLine } from './failures.js';

export interface LiveProgress extends BuildProgress {
  /** The running shards that answered (one may close between the two queries: it is then committed, or failed). */
  shardsLive: ShardProgress[];
  /**
   * The requests per second the running shards send now: each running slice's requests over the time
   * since its attempt started (its heartbeat), or for a shard whose slices report none (stage by
   * stage, the Batch API) its rate over its recent slice ends.
   */
  requestsPerSecond: number;
  /**
   * The cause of the most recent failed attempt of a running shard's activity that Temporal is
   * retrying (its pending activity's last failure), on one line: what the failed-attempt counts alone never say.
   */
  lastFailure?: string;
}

/** A failed attempt of a pending activity: its cause on one line, and when it ended (ms). */
interface AttemptFailure {
  message: string;
  at: number;
}

/** `now`: the wall clock the running slices' request rates are read at. */
export async function withRunningShards(workflows: WorkflowClient, progress: BuildProgress, now = Date.now()): Promise<LiveProgress> {
  const answers = await Promise.all((progress.runningShards ?? []).map((id) => liveShard(workflows.getHandle(id), now).catch(() => undefined)));
  const live = answers.filter((a) => a !== undefined);
  const last = live.map((a) => a.lastFailure).reduce<AttemptFailure | undefined>((latest, f) => (f && (!latest || f.at > latest.at) ? f : latest), undefined);
  const requestsPerSecond = live.reduce((sum, a) => sum + a.requestsPerSecond, 0);
  return { ...progress, shardsLive: live.map((a) => a.shard), requestsPerSecond, ...(last ? { lastFailure: last.message } : {}) };
}

/**
 * The latest failure among pending activities (DescribeWorkflowExecution's pending_activities:
 * `last_failure` and `last_attempt_complete_time`, temporal/api workflow/v1/message.proto
 * PendingActivityInfo), as its innermost cause: Temporal's wrappers add nothing the user acts on.
 */
export function latestActivityFailure(pending: ReadonlyArray<PendingActivity>): AttemptFailure | undefined {
  let latest: AttemptFailure | undefined;
  for (const activity of pending) {
    const failure = causeChain(activity.lastFailure).at(-1) as ProtoFailure | undefined;
    if (!failure) continue;
    const at = Number(activity.lastAttemptCompleteTime?.seconds ?? 0) * 1000 + Math.floor((activity.lastAttemptCompleteTime?.nanos ?? 0) / 1e6);
    if (failure.message && (!latest || at > latest.at)) latest = { message: oneLine(failure.message), at };
  }
  return latest;
}

/** The fields of a pending activity read here (the proto's, as @temporalio/client returns them in `raw`). */
interface PendingActivity {
  heartbeatDetails?: { payloads?: unknown[] | null } | null;
  lastFailure?: ProtoFailure | null;
  lastAttemptCompleteTime?: { seconds?: number | { toString(): string } | null; nanos?: number | null } | null;
}
interface ProtoFailure {
  message?: string | null;
  cause?: ProtoFailure | null;
}

async function liveShard(handle: WorkflowHandle, now: number): Promise<{ shard: ShardProgress; requestsPerSecond: number; lastFailure?: AttemptFailure }> {
  const [shard, { beats: running, lastFailure }] = await Promise.all([handle.query<ShardProgress>('shardProgress'), runningSlices(handle)]);
  const tallies = copyTallies(shard);
  const stages = { ...shard.stages };
  let { accepted, rejected } = shard;
  for (const beat of running) {
    addTallies(tallies, beat);
    for (const [stage, n] of Object.entries(beat.stages ?? {}) as Array<[StageName, number]>) stages[stage] = (stages[stage] ?? 0) + n;
    accepted += beat.accepted ?? 0;
    rejected += beat.rejected ?? 0;
  }
  const requests = shard.requests + running.reduce((sum, beat) => sum + (beat.requests ?? 0), 0);
  const timed = running.filter((beat) => beat.startedAt !== undefined && beat.requests !== undefined);
  // A slice younger than a second is rated over one: its first requests are not a burst of thousands a second.
  const requestsPerSecond = timed.length ? timed.reduce((sum, beat) => sum + beat.requests! / Math.max((now - beat.startedAt!) / 1000, 1), 0) : requestRate(shard, now);
  return { shard: { ...shard, stages, accepted, rejected, requests, ...tallies }, requestsPerSecond, ...(lastFailure ? { lastFailure } : {}) };
}

/** What the shard's running slices last heartbeated, and their latest failed attempt; none when it cannot be described. */
async function runningSlices(handle: WorkflowHandle): Promise<{ beats: SliceHeartbeat[]; lastFailure?: AttemptFailure }> {
  const description = await handle.describe().catch(() => undefined);
  const pending = description?.raw.pendingActivities ?? [];
  const beats: SliceHeartbeat[] = [];
  for (const activity of pending) {
    const payload = activity.heartbeatDetails?.payloads?.[0];
    const beat = payload ? sliceHeartbeat(defaultPayloadConverter.fromPayload(payload)) : undefined;
    if (beat) beats.push(beat);
  }
  const lastFailure = latestActivityFailure(pending as ReadonlyArray<PendingActivity>);
  return { beats, ...(lastFailure ? { lastFailure } : {}) };
}
