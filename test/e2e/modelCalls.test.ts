/**
 * Model calls in real builds. The per-endpoint cap holds across all concurrent activities of a
 * worker. The Batch API path, end to end against the simulator's /v1/files and /v1/batches: the
 * same dataset as the synchronous path, a worker restart during the durable wait, failed lines
 * resubmitted, expired batches falling back to synchronous calls, batch calls priced at the discount.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BuildConfigInput } from '../../config/buildConfig.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import { LocalStore } from '../../storage/localStore.js';
import { writeCc3m } from '../fixtures/cc3m.js';
import { assertCommittedShardsIntact, eventually } from '../harness/datasetChecks.js';
import { startStack, type Stack } from '../harness/stack.js';

let stack: Stack;
let dir: string;

before(async () => {
  stack = await startStack({ simulator: { seed: 8 }, taskQueue: 'mmif-batch' });
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-batch-'));
  await writeCc3m(new LocalStore(path.join(dir, 'cc3m')), 'files', { perShard: 3, shards: 2 });
});

after(async () => {
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const config = (buildId: string, batch: boolean): BuildConfigInput => ({
  buildId,
  seed: 4,
  output: path.join(dir, buildId),
  sources: [{ type: 'cc3m', uri: path.join(dir, 'cc3m') }],
  maxSamples: 6,
  shardSize: 3,
  batchApi: { pollSeconds: 1, maxResubmits: 3 },
  // A price for the simulated model, so batch pricing shows.
  llm: { prices: { 'mmif-sim-vlm': { inputPerMTok: 2, outputPerMTok: 8, batchDiscount: 0.5 } } },
  models: { default: { model: 'mmif-sim-vlm', batch } },
});

const run = async (workflowId: string, input: BuildConfigInput) =>
  (await stack.client.workflow.execute('buildDataset', { taskQueue: stack.taskQueue, workflowId, args: [input] })) as BuildReport;

const dataFiles = async (buildId: string) =>
  new Map([...(await assertCommittedShardsIntact(new LocalStore(path.join(dir, buildId)), buildId, 2))].filter(([f]) => !f.startsWith('manifests/')));

test('the per-endpoint concurrency cap holds across every concurrent activity of the worker', async () => {
  stack.simulator.setFaults({ latencyMs: 60 });
  stack.simulator.resetStats();
  try {
    const input = { ...config('capped', false), maxParallelShards: 2, sliceSize: 1, llm: { concurrency: 8 }, models: { default: { model: 'mmif-sim-vlm', concurrency: 2 } } };
    const report = await run('capped', input);
    assert.equal(report.shards.committed, 2);
    const stats = stack.simulator.stats();
    assert.ok(stats.requests > 50, 'enough calls to contend');
    assert.equal(stats.maxInFlight, 2, 'never more than the cap in flight, and the cap reached');
  } finally {
    stack.simulator.setFaults({ latencyMs: 0 });
  }
});

/** Activity tasks waiting in `taskQueue` (the server's approximate backlog, reported with reportStats). */
async function activityBacklog(taskQueue: string): Promise<number> {
  const { stats } = await stack.client.workflowService.describeTaskQueue({
    namespace: 'default',
    taskQueue: { name: taskQueue },
    taskQueueType: 2 /* TASK_QUEUE_TYPE_ACTIVITY */,
    reportStats: true,
  });
  return Number(stats?.approximateBacklogCount ?? 0);
}

test("a stage routed to its endpoint's task queue runs only on that queue's workers", async () => {
  const input = {
    ...config('routed', false),
    models: { default: { model: 'mmif-sim-vlm' }, answer: { model: 'mmif-sim-vlm', taskQueue: 'mmif-batch-answers' } },
  };
  const handle = await stack.client.workflow.start('buildDataset', { taskQueue: stack.taskQueue, workflowId: 'routed', args: [input] });
  // No worker polls the answers queue yet: the build stops before its answer stage, whose activities
  // wait in that queue's backlog.
  await eventually(async () => (await activityBacklog('mmif-batch-answers')) > 0, 60_000, 'answer activities waiting in their queue');
  const waiting = await handle.query<{ shards: { committed: number } }>('progress');
  assert.equal(waiting.shards.committed, 0);
  const answers = stack.simulator.stats().byStage.answer;
  // The queue's workers are started with a task-queue activity rate, as `mmif worker` does with
  // MMIF_TASK_QUEUE_ACTIVITIES_PER_SECOND (Temporal enforces it server-side; not timed here).
  await stack.startWorker({ taskQueue: 'mmif-batch-answers', maxTaskQueueActivitiesPerSecond: 5 });
  const report = (await handle.result()) as BuildReport;
  assert.equal(report.shards.committed, 2);
  assert.ok(stack.simulator.stats().byStage.answer > answers, 'the answers worker made the answer calls');
});

test('batch mode: same dataset as the synchronous path, across a worker restart, with failed lines resubmitted', async () => {
  const sync = await run('sync', config('sync', false));
  assert.equal(sync.shards.committed, 2);

  stack.simulator.setFaults({ batchCompletionMs: 1500, batchFailureRate: 0.3 });
  try {
    const handle = await stack.client.workflow.start('buildDataset', { taskQueue: stack.taskQueue, workflowId: 'batched', args: [config('batched', true)] });
    await eventually(() => stack.simulator.stats().batch.requests > 0, 30_000, 'a batch to be submitted');
    await stack.stopWorkers(); // the waiting activity is retried on the next worker: polling pays nothing
    await new Promise((r) => setTimeout(r, 1_000));
    await stack.startWorker();
    const report = (await handle.result()) as BuildReport;
    assert.deepEqual(report.shards, { planned: 2, committed: 2, failed: 0 });
    const stats = stack.simulator.stats().batch;
    assert.ok(stats.failed > 0, 'some lines failed');
    for (const stage of ['instruction', 'constraints', 'answer', 'rejected']) {
      assert.ok(report.usage[stage]!.batchRequests > 0, `${stage} went through the Batch API`);
    }
    // Batch calls cost half: the batched instruction stage costs less than the synchronous one.
    assert.ok(report.usage.instruction!.costUsd < sync.usage.instruction!.costUsd, JSON.stringify([report.usage.instruction, sync.usage.instruction]));
    assert.deepEqual(await dataFiles('batched'), await dataFiles('sync'), 'byte-identical to the synchronous build');
    // The waits live in one heartbeating activity per batch, not in timers and polls in history.
    for (const shard of [0, 1]) {
      const { events } = await stack.client.workflow.getHandle(`batched/shard-${shard}`).fetchHistory();
      const scheduled = (events ?? []).map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean);
      assert.ok(scheduled.includes('awaitStageBatch'), `shard ${shard} waited in an activity`);
      assert.equal((events ?? []).filter((e) => e.timerStartedEventAttributes).length, 0, `shard ${shard} started timers`);
    }
  } finally {
    stack.simulator.setFaults({ batchCompletionMs: 0, batchFailureRate: 0 });
  }
});

test('expired batches are resubmitted, then their calls are made synchronously', async () => {
  stack.simulator.setFaults({ batchCompletionMs: 300, batchExpireRate: 1 });
  try {
    const report = await run('expired', { ...config('expired', true), batchApi: { pollSeconds: 1, maxResubmits: 1 } });
    assert.deepEqual(report.shards, { planned: 2, committed: 2, failed: 0 });
    assert.ok(stack.simulator.stats().batch.expired > 0);
    assert.equal(report.usage.instruction!.batchRequests, 0, 'nothing came back from an expired batch');
    assert.deepEqual(await dataFiles('expired'), await dataFiles('sync'));
  } finally {
    stack.simulator.setFaults({ batchCompletionMs: 0, batchExpireRate: 0 });
  }
});
