/**
 * Workflow logic that waits, on Temporal's time-skipping test server (test/harness/timeSkipping.ts)
 * with the real worker, activities and simulator: what a dev server would make a test wait for in
 * real time (activity retry backoff, a retry window, days between scheduled runs) is skipped.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import type { BuildConfigInput } from '../../config/buildConfig.js';
import { scheduledRunWorkflowId } from '../../domain/buildWorkflowId.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import { LocalStore } from '../../storage/localStore.js';
import type { BuildProgress } from '../../workflows/buildProgress.js';
import { endpointLeasesWorkflowId, reportDemandUpdate } from '../../workflows/endpointLeases.js';
import { LEASE_MS, type EndpointDemand } from '../../llm/concurrencyLeases.js';
import { writeCc3m } from '../fixtures/cc3m.js';
import { eventually } from '../harness/datasetChecks.js';
import { startTimeSkippingStack, type TimeSkippingStack } from '../harness/timeSkipping.js';
import { failureLine } from '../harness/buildFailure.js';

let stack: TimeSkippingStack;
let dir: string;

before(async () => {
  stack = await startTimeSkippingStack({ simulator: { seed: 23 }, taskQueue: 'mmif-time-skipping' });
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-time-skipping-'));
  await writeCc3m(new LocalStore(path.join(dir, 'cc3m')), 'files', { perShard: 2, shards: 1 });
});

after(async () => {
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function config(buildId: string, overrides: Partial<BuildConfigInput> = {}): BuildConfigInput {
  return {
    buildId,
    seed: 3,
    output: path.join(dir, 'out', buildId),
    sources: [{ type: 'cc3m', uri: path.join(dir, 'cc3m') }],
    maxSamples: 2,
    shardSize: 2,
    sliceSize: 2,
    llm: { preflight: false, retry: { maxAttempts: 1, baseDelayMs: 10, maxDelayMs: 10 } },
    models: { default: { model: 'mmif-sim-vlm' } },
    ...overrides,
  };
}

async function history(handle: WorkflowHandle): Promise<temporal.api.history.v1.IHistoryEvent[]> {
  return (await handle.fetchHistory()).events ?? [];
}

const seconds = (d: { seconds?: unknown } | null | undefined) => Number(d?.seconds ?? 0);

test('a failed shard: the default retry policy runs out, the build waits its hour-long retry window, then fails with its one line', async () => {
  const buildId = 'window-closes';
  stack.simulator.setFaults({ rate500: 1 });
  try {
    // The default retry policy (8 attempts, backing off 2 s to 120 s: ~4 min) and a one-hour window:
    // on a dev server this test would take over an hour; here both are skipped.
    const handle = await stack.env.client.workflow.start('buildDataset', {
      taskQueue: stack.taskQueue,
      workflowId: buildId,
      args: [config(buildId, { retryWindowSeconds: 3600 })],
    });
    await assert.rejects(handle.result(), (err: unknown) => {
      assert.equal(
        failureLine(err),
        `1 of 1 shards failed (report: ${path.join(dir, 'out', buildId, buildId, 'build-report.json')}): ` +
          `shard 0: instruction: model endpoint ${stack.simulator.url} (model mmif-sim-vlm): HTTP 500: internal_error: Simulated internal server error., 1 attempt`,
      );
      return true;
    });
    // The shard's stage activity was tried as often as the default policy allows, no more.
    const shard = stack.env.client.workflow.getHandle(`${buildId}/shard-0`);
    const attempts = (await history(shard)).filter((e) => e.activityTaskStartedEventAttributes).map((e) => e.activityTaskStartedEventAttributes!.attempt ?? 0);
    assert.equal(Math.max(...attempts), 8);
    // The build waited the whole window for a retryFailedShards update: one timer of 3600 s, fired.
    const events = await history(handle);
    const timers = events.filter((e) => e.timerStartedEventAttributes).map((e) => seconds(e.timerStartedEventAttributes!.startToFireTimeout));
    assert.deepEqual(timers, [3600]);
    assert.equal(events.filter((e) => e.timerFiredEventAttributes).length, 1);
  } finally {
    stack.simulator.setFaults({ rate500: 0 });
  }
});

test('the retry window holds for its whole length: an update 59 minutes in still re-runs the failed shard', async () => {
  const buildId = 'window-holds';
  // One attempt: the shard fails at once, in real time (time skips only while a result is awaited).
  const input = config(buildId, { retryWindowSeconds: 3600, retry: { maximumAttempts: 1 } });
  stack.simulator.setFaults({ rate500: 1 });
  let handle: WorkflowHandle;
  try {
    handle = await stack.env.client.workflow.start('buildDataset', { taskQueue: stack.taskQueue, workflowId: buildId, args: [input] });
    const progress = () => handle.query<BuildProgress>('progress');
    await eventually(async () => (await progress()).phase === 'waiting-for-retry', 60_000, 'the retry window');
  } finally {
    stack.simulator.setFaults({ rate500: 0 });
  }
  const from = await stack.env.currentTimeMs();
  await stack.env.sleep('59 minutes');
  assert.ok((await stack.env.currentTimeMs()) - from >= 59 * 60_000, 'the server clock moved 59 minutes');
  assert.equal((await handle.query<BuildProgress>('progress')).phase, 'waiting-for-retry');
  assert.deepEqual(await handle.executeUpdate('retryFailedShards'), { retrying: [0] });
  const report = (await handle.result()) as BuildReport;
  assert.deepEqual(report.shards, { planned: 1, committed: 1, failed: 0 });
});

test('a scheduled build started without a schedule dates its run by its start time: three days later, a new folder, and no model call', async () => {
  const input = config('dated');
  const run = async (workflowId: string) => {
    const handle = await stack.env.client.workflow.start('scheduledBuild', { taskQueue: stack.taskQueue, workflowId, args: [input] });
    const report = (await handle.result()) as BuildReport;
    const date = (await handle.describe()).startTime.toISOString().slice(0, 10);
    return { report, date };
  };
  const requests = () => stack.simulator.stats().requests;
  const first = await run('dated-first');
  const before = requests();
  assert.ok(before > 0, 'the first run called the model');
  await stack.env.sleep('3 days');
  const second = await run('dated-second');

  assert.equal(Date.parse(second.date) - Date.parse(first.date), 3 * 86_400_000, 'the second run is dated three days later');
  for (const { report, date } of [first, second]) {
    assert.deepEqual(report.shards, { planned: 1, committed: 1, failed: 0 });
    // Under <output>/<date>/<buildId>/, by the child build whose id carries that date.
    assert.deepEqual(await readdir(path.join(input.output, date)), ['dated']);
    assert.ok((await readdir(path.join(input.output, date, 'dated'))).includes('build-report.json'));
    assert.equal((await stack.env.client.workflow.getHandle(scheduledRunWorkflowId('dated', date)).describe()).status.name, 'COMPLETED');
  }
  // The dated runs share the base output's model-call cache: the same samples cost nothing again.
  assert.equal(requests(), before);
});

test("the lease desk: a stale report is refused, a silent worker's lease goes to a busy one after its term, and the desk ends within two idle periods of the last report", async () => {
  const handle = await stack.env.client.workflow.start('endpointLeases', { taskQueue: stack.taskQueue, workflowId: endpointLeasesWorkflowId('time-skipping-probe'), args: [] });
  const seq: Record<string, number> = {};
  // Each worker wants the whole cap of one endpoint.
  const demand: EndpointDemand = { endpoint: 'e', cap: 4, inFlight: 0, queued: 4, holding: 0 };
  const report = (worker: string) =>
    handle.executeUpdate(reportDemandUpdate, {
      args: [{ worker, seq: (seq[worker] = (seq[worker] ?? 0) + 1), endpoints: [demand] }],
    });
  assert.deepEqual((await report('a')).grants, { e: 4 });
  // a holds the whole cap: b gets nothing (its unchanged answer is held up to HOLD_MS, in real time).
  assert.deepEqual((await report('b')).grants, { e: 0 });
  // A report of a no newer than its last is refused before it enters history: it moves nothing.
  // (A rejected update leaves no accepted event; its workflow task may still be recorded.)
  const accepted = async () => ((await handle.fetchHistory()).events ?? []).filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes).length;
  const seen = await accepted();
  await assert.rejects(handle.executeUpdate(reportDemandUpdate, { args: [{ worker: 'a', seq: seq.a!, endpoints: [{ ...demand, holding: 4 }], release: true }] }), (err: Error) =>
    /stale report: worker a sent seq 1, the desk holds 1/.test(`${err.message} ${(err.cause as Error | undefined)?.message ?? ''}`),
  );
  assert.equal(await accepted(), seen, 'the stale report was never accepted into history');
  // a falls silent past its lease's term: its lease returns to the pool at b's next report.
  await stack.env.sleep(LEASE_MS + 1_000);
  assert.deepEqual((await report('b')).grants, { e: 4 });
  // b falls silent too: the desk checks every IDLE_END (2 minutes); at the first check that saw no
  // report in the period before it, it forgets b and, holding nothing, ends: 2 to 4 minutes later.
  // (Its close time, not the clock after result(): once it closes, the clock may skip on to another
  // workflow's timer before the client locks it again.)
  const from = await stack.env.currentTimeMs();
  await handle.result();
  const idle = (await handle.describe()).closeTime!.getTime() - from;
  assert.ok(idle >= 2 * 60_000 && idle < 4 * 60_000, `the desk ended ${idle} ms after the last report, not 2 to 4 minutes`);
});

test('a 429 that never clears: past llm.retry and the activity retries, the build fails with the role, endpoint, model, status and attempts on one line', async () => {
  const buildId = 'always-429';
  stack.simulator.setFaults({ rate429: 1, retryAfterSeconds: 0 });
  try {
    const input = config(buildId, { retry: { maximumAttempts: 2 }, llm: { preflight: false, retry: { maxAttempts: 2, baseDelayMs: 10, maxDelayMs: 10 } } });
    const handle = await stack.env.client.workflow.start('buildDataset', { taskQueue: stack.taskQueue, workflowId: buildId, args: [input] });
    await assert.rejects(handle.result(), (err: unknown) => {
      assert.equal(
        failureLine(err),
        `1 of 1 shards failed (report: ${path.join(dir, 'out', buildId, buildId, 'build-report.json')}): ` +
          `shard 0: instruction: model endpoint ${stack.simulator.url} (model mmif-sim-vlm): HTTP 429: rate_limit_exceeded: Simulated rate limit reached, please retry later., 2 attempts`,
      );
      return true;
    });
    // Both activity attempts ran (each with its 2 calls), and the line is the last one's.
    const shard = stack.env.client.workflow.getHandle(`${buildId}/shard-0`);
    const attempts = (await history(shard)).filter((e) => e.activityTaskStartedEventAttributes).map((e) => e.activityTaskStartedEventAttributes!.attempt ?? 0);
    assert.equal(Math.max(...attempts), 2);
  } finally {
    stack.simulator.setFaults({ rate429: 0, retryAfterSeconds: 1 });
  }
});
