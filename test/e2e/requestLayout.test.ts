/**
 * The request layout is fixed when a build is planned (prompts/chat.ts, pipeline/planning/planBuild.ts). A
 * build planned before layouts were recorded (its stored config has no `requestLayout`) asked its
 * reference-answer and chat requests in layout 1; resumed after the change, it keeps layout 1 and
 * finds every reply in its model cache: not one new request; so does a build planned under layout 2
 * (before layout 3 sent the offered constraint types as an enum). A build planned now records the
 * current layout, and the same samples under it pay again for the requests the layouts changed and
 * what reads their replies, never for the instruction requests, which shows the resume's cache hits
 * come from the recorded layout. On a real Temporal dev server with the HTTP simulator: a ChartQA
 * build (reference answers) and a small multiturn build (chats).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SAMPLES_DIR } from '../../cli/quickstartConfig.js';
import type { BuildConfigInput } from '../../config/buildConfig.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import type { StoredConfig } from '../../pipeline/planning/planBuild.types.js';
import { CURRENT_REQUEST_LAYOUT, type RequestLayout } from '../../prompts/chat.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { LocalStore } from '../../storage/localStore.js';
import { getJson } from '../../storage/objectStore.js';
import { writeChartqa } from '../fixtures/chartqa.js';
import { assertCommittedShardsIntact } from '../harness/datasetChecks.js';
import { planUnderLayout } from '../harness/plannedBefore.js';
import { startStack, type Stack } from '../harness/stack.js';

let stack: Stack;
let dir: string;
let store: LocalStore;

before(async () => {
  stack = await startStack({ simulator: { seed: 5 }, taskQueue: 'mmif-request-layout' });
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-request-layout-'));
  store = new LocalStore(path.join(dir, 'out'));
  await writeChartqa(new LocalStore(path.join(dir, 'chartqa')));
});

after(async () => {
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const models = { default: { model: 'mmif-sim-vlm' }, rejected: { model: 'mmif-sim-vlm-mini' } };
const chartqa = (buildId: string): BuildConfigInput => ({
  buildId,
  seed: 3,
  output: store.root,
  sources: [{ type: 'chartqa', uri: path.join(dir, 'chartqa'), splits: ['train'], sets: ['human'] }],
  maxSamples: 3,
  shardSize: 3,
  models,
});
const multiturn = (buildId: string): BuildConfigInput => ({
  buildId,
  seed: 3,
  output: store.root,
  sources: [{ type: 'cc3m', uri: SAMPLES_DIR, layout: 'files' }],
  maxSamples: 2,
  shardSize: 2,
  mode: 'multiturn',
  chat: { turns: 3, maxInstructions: 2 },
  models,
});

// One run after another under the buildId: a build runs under no other workflow id.
const build = (config: BuildConfigInput): Promise<BuildReport> =>
  stack.client.workflow.execute('buildDataset', { taskQueue: stack.taskQueue, workflowId: config.buildId, args: [config] });

/** Paid (not cached) requests per stage of a report. */
const paid = (report: BuildReport) =>
  Object.fromEntries(Object.entries(report.usage).flatMap(([stage, u]) => (u.requests > u.cachedRequests ? [[stage, u.requests - u.cachedRequests]] : [])));

/**
 * What the layouts since changed: the answer requests (layout 2), the constraint requests (layout 3:
 * the offered types as an enum in the reply schema), then every call that reads their replies.
 */
const UNCHANGED = ['instruction'];

for (const [name, config] of [
  ['reference answers (ChartQA)', chartqa],
  ['multiturn chats', multiturn],
] as const) {
  test(`${name}: a build planned with the old layout resumes with 0 new requests; a build planned now uses the new one`, async () => {
    await assertResumesPayingNothing(config(`${name.split(' ')[0]}-old`), undefined);

    // The same samples planned now (same seed, same model cache): the current layout, recorded; only the changed requests are new.
    const now = config(`${name.split(' ')[0]}-now`);
    const fresh = await build(now);
    assert.equal((await getJson<StoredConfig>(store, buildLayout(now.buildId).config))?.requestLayout, CURRENT_REQUEST_LAYOUT);
    const { preflight: _checked, ...newly } = paid(fresh);
    assert.ok((newly.answer ?? 0) > 0, `the moved answer requests are new: ${JSON.stringify(newly)}`);
    assert.ok((newly.constraints ?? 0) > 0, `the constraint requests (an enum of offered types) are new: ${JSON.stringify(newly)}`);
    for (const stage of UNCHANGED) assert.equal(newly[stage], undefined, `${stage} asks nothing the layouts changed, yet paid: ${JSON.stringify(newly)}`);
  });
}

test('a build planned under layout 2 (before the enum of constraint types) resumes with 0 new requests', async () => {
  await assertResumesPayingNothing(chartqa('reference-layout2'), 2);
});

/**
 * Builds `old` as planned ahead under `layout` (unset: before layouts were recorded), then resumes it
 * as a crashed build would: it keeps that layout, sends not one new request and writes the same records.
 */
async function assertResumesPayingNothing(old: BuildConfigInput, layout: RequestLayout | undefined): Promise<void> {
  await planUnderLayout(store, old, layout);
  const first = await build(old);
  assert.ok(first.shards.committed > 0 && first.shards.failed === 0, JSON.stringify(first.shards));
  const stored = await getJson<StoredConfig>(store, buildLayout(old.buildId).config);
  assert.equal(stored?.requestLayout, layout, 'planning keeps the stored config of a build planned before');
  const sums = await assertCommittedShardsIntact(store, old.buildId, first.shards.planned);

  // Resume as a crashed build would: no stage state, no commit; every stage runs again.
  const requests = stack.simulator.stats().requests;
  await rm(path.join(store.root, old.buildId, '_work', 'samples'), { recursive: true });
  await rm(path.join(store.root, old.buildId, 'manifests'), { recursive: true });
  const resumed = await build(old);
  // (Its report counts the replies it paid for before the crash as its own, being the same build.)
  assert.equal(stack.simulator.stats().requests, requests, 'the resumed build sent no request');
  assert.deepEqual(await assertCommittedShardsIntact(store, old.buildId, resumed.shards.planned), sums, 'the same records');
}
