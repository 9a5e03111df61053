/**
 * A flaky or misconfigured endpoint, end to end (Temporal dev server, simulator over HTTP):
 * unusable replies are tried again and never poison the shared model cache, so a later build on the
 * same output regenerates exactly the samples they rejected; an endpoint refusing everything fails
 * its shards with the endpoint, status and error in the message, and recovers on a re-run.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import type { BuildConfigInput } from '../../config/buildConfig.js';
import type { InstructRecord, RejectRecord } from '../../output/records.js';
import type { SourceSample } from '../../domain/sample.js';
import type { BuildReport } from '../../output/buildReport.js';
import { buildLayout } from '../../output/layout.js';
import { STAGE_NAMES, type StageState } from '../../pipeline/stageState.js';
import { getJson } from '../../storage/objectStore.js';
import { LocalStore } from '../../storage/localStore.js';
import { writeCc3m } from '../fixtures/cc3m.js';
import { startStack, type Stack } from '../harness/stack.js';

let stack: Stack;
let dir: string;
const SHARDS = 3;

before(async () => {
  stack = await startStack({ simulator: { seed: 21 }, taskQueue: 'mmif-faults' });
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-faults-'));
  await writeCc3m(new LocalStore(path.join(dir, 'cc3m')), 'files', { perShard: 4, shards: SHARDS });
});

after(async () => {
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const output = () => path.join(dir, 'out');

const config = (buildId: string, extra: Partial<BuildConfigInput> = {}): BuildConfigInput => ({
  buildId,
  seed: 5,
  output: output(),
  sources: [{ type: 'cc3m', uri: path.join(dir, 'cc3m') }],
  maxSamples: 12,
  shardSize: 4,
  models: { default: { model: 'mmif-sim-vlm' } },
  ...extra,
});

const run = async (workflowId: string, input: BuildConfigInput) =>
  (await stack.client.workflow.execute('buildDataset', { taskQueue: stack.taskQueue, workflowId, args: [input] })) as BuildReport;

/** Per sample id: its instruct record (or undefined), its reject records, and whether this build paid for any call. */
async function outcomes(buildId: string) {
  const store = new LocalStore(output());
  const layout = buildLayout(buildId);
  const bySample = new Map<string, { record?: InstructRecord; rejects: RejectRecord[]; paid: number }>();
  for (let shard = 0; shard < SHARDS; shard++) {
    const plan = (await getJson<SourceSample[]>(store, layout.shardPlan(shard)))!;
    for (const sample of plan) {
      let paid = 0;
      for (const stage of STAGE_NAMES) {
        const state = await getJson<StageState>(store, layout.stageState(sample.sampleId, stage));
        paid += (state?.calls ?? []).filter((c) => !c.cached).length;
      }
      bySample.set(sample.sampleId, { rejects: [], paid });
    }
    const lines = (key: string) => (async () => ((await store.get(key))?.toString() ?? '').split('\n').filter(Boolean))();
    for (const line of await lines(layout.instructJsonl(shard))) {
      const record = JSON.parse(line) as InstructRecord;
      bySample.get(record.id)!.record = record;
    }
    for (const line of await lines(layout.rejects(shard))) {
      const reject = JSON.parse(line) as RejectRecord;
      bySample.get(reject.id)!.rejects.push(reject);
    }
  }
  return bySample;
}

test('30% unusable replies: tried again, never cached as final; a build after the faults cleared regenerates exactly the samples they rejected', async () => {
  // Malformed: invalid JSON for JSON stages, empty prose; truncated: half the reply, finish_reason length.
  stack.simulator.setFaults({ rateMalformed: 0.15, rateTruncated: 0.15 });
  let flaky: BuildReport;
  try {
    flaky = await run('flaky', config('flaky', { llm: { errorBudget: { maxFraction: 1, maxConsecutive: 100 } } }));
  } finally {
    stack.simulator.setFaults({ rateMalformed: 0, rateTruncated: 0 });
  }
  assert.deepEqual(flaky.shards, { planned: SHARDS, committed: SHARDS, failed: 0 });
  const before = await outcomes('flaky');
  const tried = [...before.values()].flatMap((o) => o.rejects);
  const victims = new Set(tried.filter((r) => r.modelCall).map((r) => r.id));
  console.log(`unusable replies rejected ${victims.size} of ${before.size} samples (${tried.length} rejects in all)`);
  assert.ok(victims.size > 0 && victims.size < before.size, `some samples lost to unusable replies, not all: ${victims.size}/${before.size}`);
  for (const r of tried.filter((t) => t.modelCall)) {
    assert.match(r.reason, /^(instruction|constraints|compatibility|verifier|answer|rejected|judge): (empty-reply|truncated-reply|invalid-json): .*\(3 tries\)$/);
    assert.equal(r.modelCall!.endpoint, stack.simulator.url);
  }
  // Retries recovered most bad replies: later tries are in the calls, and most samples came through.
  assert.ok(Object.values(flaky.usage).some((u) => u.requests > 0));

  // The faults are gone. A new build on the same output (so the same model cache), same seed.
  stack.simulator.resetStats();
  const healthy = await run('healthy', config('healthy', { llm: { errorBudget: { maxFraction: 1, maxConsecutive: 100 } } }));
  assert.deepEqual(healthy.shards, { planned: SHARDS, committed: SHARDS, failed: 0 });
  const after = await outcomes('healthy');
  const paidFor = new Set([...after].filter(([, o]) => o.paid > 0).map(([id]) => id));
  assert.deepEqual([...paidFor].sort(), [...victims].sort(), 'requests were made for exactly the samples the faults rejected');
  assert.ok(stack.simulator.stats().requests > 0);
  for (const [id, o] of after) {
    assert.ok(!o.rejects.some((r) => r.modelCall), `${id} is no longer rejected for a model call`);
    if (!victims.has(id)) assert.deepEqual(o.record, before.get(id)!.record, `${id} is the same as before, from the cache`);
  }
});

test('an endpoint answering 400 to everything fails its shards with the endpoint, status and error; a re-run recovers', async () => {
  // Its own output, so no cached reply of the builds above answers for the endpoint.
  const refusedOutput = path.join(dir, 'out-refused');
  const input = config('refused', { output: refusedOutput, llm: { preflight: false }, maxParallelShards: 3 });
  stack.simulator.setFaults({ rate400: 1 });
  const started = Date.now();
  try {
    await assert.rejects(run('refused', input), (err: unknown) => {
      assert.ok(err instanceof WorkflowFailedError);
      assert.match(String(err.cause?.message), /3 of 3 shards failed/);
      return true;
    });
  } finally {
    stack.simulator.setFaults({ rate400: 0 });
  }
  const seconds = (Date.now() - started) / 1000;
  const report = JSON.parse((await new LocalStore(refusedOutput).get(buildLayout('refused').report))!.toString()) as BuildReport;
  assert.equal(report.failedShards.length, SHARDS);
  for (const failed of report.failedShards) {
    assert.match(
      failed.error,
      new RegExp(
        `^shard ${failed.shard}: 4 of 4 samples rejected by model-call errors, over the error budget \\(llm.errorBudget.maxFraction 0.2\\); ` +
          `first: model endpoint ${stack.simulator.url.replace(/\./g, '\\.')} \\(model mmif-sim-vlm\\): HTTP 400: invalid_request: Simulated invalid request`,
      ),
    );
  }
  assert.ok(seconds < 60, `failed in ${seconds.toFixed(1)} s, without minutes of retries`);

  // The endpoint is fixed: re-running the build tries the refused samples again and commits.
  const rerun = await stack.client.workflow.execute('buildDataset', {
    taskQueue: stack.taskQueue,
    workflowId: 'refused',
    args: [input],
    workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
  });
  assert.deepEqual((rerun as BuildReport).shards, { planned: SHARDS, committed: SHARDS, failed: 0 });
  assert.ok((rerun as BuildReport).counts.instruct > 0);
});
