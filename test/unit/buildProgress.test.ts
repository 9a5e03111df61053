import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ShardSummary } from '../../activities/buildRef.js';
import { formatProgress, sampleRate } from '../../cli/progressView.js';
import { latestActivityFailure, type LiveProgress } from '../../cli/liveProgress.js';
import { newProgress, recordCommittedShard, restartRate } from '../../workflows/buildProgress.js';
import { sampleFates } from '../../config/stages.js';
import { stubSummary } from '../harness/shardSummaries.js';
import { newShardProgress, recordSlice, recordSliceStages, requestRate } from '../../workflows/shardProgress.js';

const MIN = 60_000;
const shard = (n: number, instruct: number, rejected = 0): ShardSummary => stubSummary(n, instruct + rejected, instruct, 0);

test('the rate leaves out planning and the shards a resume found done; the ETA follows it, and a retry restarts it', () => {
  const p = newProgress('b', 0);
  p.samples.planned = 100;
  // A resume finds 60 samples done; planning took 20 minutes.
  recordCommittedShard(p, shard(0, 50, 10), 6);
  restartRate(p, 20 * MIN);
  assert.deepEqual(sampleRate(p, 20 * MIN), { samplesPerMinute: 0 }, 'no rate before a sample of this run is done');
  recordCommittedShard(p, shard(6, 10));
  assert.deepEqual(sampleRate(p, 21 * MIN), { samplesPerMinute: 10, etaSeconds: 3 * 60 }, '10 samples in the minute since the shards started; 30 left');
  // A running shard's samples count as their stages finish, not only once it commits.
  const live = newShardProgress(7, 10, ['image', 'answer'], 21 * MIN);
  live.accepted = 8;
  live.rejected = 2;
  assert.deepEqual(sampleRate({ ...p, shardsLive: [live], requestsPerSecond: 0 }, 22 * MIN), { samplesPerMinute: 10, etaSeconds: 2 * 60 });
  // Failed shards wait an hour for a retry: the wait is not part of the rate.
  restartRate(p, 80 * MIN);
  recordCommittedShard(p, shard(8, 30));
  assert.deepEqual(sampleRate(p, 81 * MIN), { samplesPerMinute: 30, etaSeconds: 0 });
});

test('a running shard counts samples through each stage as slices finish, and its recent requests per second', () => {
  const live = newShardProgress(3, 8, ['image', 'instruction', 'answer'], 0);
  recordSlice(live, 'image', 4, { ok: 4, rejected: 0, blocked: 0, requests: 0 }, 1_000);
  recordSlice(live, 'instruction', 4, { ok: 3, rejected: 1, blocked: 0, requests: 6, failedAttempts: { 'rate-limited': 1 } }, 2_000);
  recordSlice(live, 'image', 4, { ok: 4, rejected: 0, blocked: 0, requests: 0 }, 3_000);
  recordSlice(live, 'instruction', 4, { ok: 4, rejected: 0, blocked: 0, requests: 4, failedAttempts: { transient: 2, 'rate-limited': 1 } }, 4_000);
  assert.deepEqual(live.stages, { image: 8, instruction: 8 });
  assert.equal(live.requests, 10);
  assert.deepEqual(live.failedAttempts, { 'rate-limited': 2, transient: 2 });
  assert.equal(requestRate(live, 5_000), 2, '10 requests in the 5 s since the shard started');
  assert.equal(requestRate(live, 62_000), 4 / 60, 'over the last minute: from the first slice end inside it (2 s, 6 requests so far)');
  assert.equal(requestRate(live, 200_000), 0, 'nothing sent for over a minute');

  const progress = {
    ...newProgress('b', 0),
    requestsPerSecondLimit: 4,
    requestsPerSecond: 2,
    shardsLive: [live, newShardProgress(4, 8, ['image', 'instruction', 'answer'], 0)],
  } satisfies LiveProgress;
  const screen = formatProgress(progress, 5_000);
  assert.match(screen, /^running shards, samples through each stage: image 8, instruction 8, answer 0$/m);
  assert.match(screen, /^requests: 2\.0\/s \(50% of the endpoints' limit, 4\.0\/s\) \| failed attempts: rate-limited 2, transient 2$/m);
});

test('a slice through all its stages in one activity counts its samples in each stage, its requests, and its failed attempts once', () => {
  const live = newShardProgress(3, 8, ['image', 'instruction', 'answer'], 0);
  const stages = {
    image: { ok: 4, rejected: 0, blocked: 0, requests: 0 },
    instruction: { ok: 3, rejected: 1, blocked: 0, requests: 5 },
    answer: { ok: 3, rejected: 0, blocked: 1, requests: 9 },
  };
  recordSliceStages(live, 4, { stages, failedAttempts: { transient: 2 } }, 3_000);
  assert.deepEqual(live.stages, { image: 4, instruction: 4, answer: 4 });
  assert.equal(live.requests, 14);
  assert.deepEqual(live.failedAttempts, { transient: 2 });
  assert.deepEqual(live.recent, [
    [0, 0],
    [3_000, 14],
  ]);
});

test('while Temporal retries a slice, the failed attempts come with the cause of the latest attempt on the same line', () => {
  const live = newShardProgress(3, 8, ['image', 'instruction', 'answer'], 0);
  recordSlice(live, 'instruction', 4, { ok: 0, rejected: 0, blocked: 0, requests: 4, failedAttempts: { transient: 7 } }, 2_000);
  // Two slices retried: the later attempt's innermost cause, on one line, not Temporal's wrapper.
  const lastFailure = latestActivityFailure([
    {
      lastFailure: { message: 'Activity task failed', cause: { message: 'instruction: model endpoint http://gpu:8000/v1 (model m): connect ECONNREFUSED' } },
      lastAttemptCompleteTime: { seconds: 100, nanos: 0 },
    },
    {
      lastFailure: { message: 'instruction: model endpoint http://gpu:8000/v1 (model m):\n HTTP 503: upstream overloaded' },
      lastAttemptCompleteTime: { seconds: 160, nanos: 5e8 },
    },
    { heartbeatDetails: { payloads: [] } },
  ]);
  assert.deepEqual(lastFailure, { message: 'instruction: model endpoint http://gpu:8000/v1 (model m): HTTP 503: upstream overloaded', at: 160_500 });
  const progress = { ...newProgress('b', 0), shardsLive: [live], requestsPerSecond: 0, lastFailure: lastFailure!.message } satisfies LiveProgress;
  assert.match(
    formatProgress(progress, 5_000),
    /\| failed attempts: transient 7 \(last: instruction: model endpoint http:\/\/gpu:8000\/v1 \(model m\): HTTP 503: upstream overloaded\)$/m,
  );
  assert.equal(latestActivityFailure([{ heartbeatDetails: null }]), undefined);
});

test('the header counts samples as their stages finish, out of the planned ones, with a rate and ETA from when the shards started', () => {
  const p = newProgress('b', 0);
  p.samples.planned = 96;
  restartRate(p, 0);
  const order = ['image', 'instruction', 'constraints', 'answer', 'rejected'] as const;
  const live = newShardProgress(0, 32, order, 0);
  // A slice of 4: one rejected by its constraints, one whose DPO pair only was rejected (still an accepted sample).
  const slice = {
    image: { ok: 4, rejected: 0, blocked: 0, requests: 0 },
    instruction: { ok: 4, rejected: 0, blocked: 0, requests: 4 },
    constraints: { ok: 3, rejected: 1, blocked: 0, requests: 6 },
    answer: { ok: 3, rejected: 0, blocked: 1, requests: 9 },
    rejected: { ok: 2, rejected: 1, blocked: 1, requests: 3 },
  };
  assert.deepEqual(sampleFates(slice, order), { accepted: 3, rejected: 1 });
  recordSliceStages(live, 4, { stages: slice, failedAttempts: { transient: 3 } }, 2 * MIN);
  const before = formatProgress({ ...p, shardsLive: [live], requestsPerSecond: 1 }, 2 * MIN);
  assert.match(before, /^samples: 3 accepted, 1 rejected of 96 planned, 0 DPO pairs committed \| 2\.0 samples\/min \| ETA 46m$/m, 'no shard committed, the header moves');
  // The shard commits: its samples and failed attempts move to the build's counts, none is lost or counted twice.
  recordCommittedShard(p, { ...shard(0, 3, 1), failedAttempts: live.failedAttempts });
  const after = formatProgress({ ...p, shardsLive: [], requestsPerSecond: 0 }, 4 * MIN);
  assert.match(after, /^samples: 3 accepted, 1 rejected of 96 planned/m, 'the denominator stays the planned samples');
  assert.match(after, /failed attempts: transient 3$/m, 'failed attempts are cumulative: a committed shard keeps its count');
});
