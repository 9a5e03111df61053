/**
 * A flaky or misconfigured endpoint, end to end (Temporal dev server, simulator over HTTP):
 * unusable replies are tried again and never poison the shared model cache, so a later build on the
 * same output, or a re-run of the same build (which re-opens the committed shards they hit),
 * regenerates exactly the samples they rejected; an endpoint refusing everything fails
 * its shards with the endpoint, status and error in the message, and recovers on a re-run; a bad
 * key, an unknown model or a text-only model fails the pre-flight in seconds, through `mmif build`
 * and through a workflow started directly.
 */
import { LANES_PER_SLOT } from '../../domain/sampleLanes.js';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import type { BuildConfigInput } from '../../config/buildConfig.js';
import type { InstructRecord, RejectRecord } from '../../output/contracts/records.js';
import type { SourceSample } from '../../domain/sample.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import type { ShardManifest } from '../../output/contracts/manifest.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { STAGE_NAMES } from '../../config/stages.js';
import { type StageState } from '../../pipeline/run/stageState.js';
import { getJson } from '../../storage/objectStore.js';
import { LocalStore } from '../../storage/localStore.js';
import { writeCc3m } from '../fixtures/cc3m.js';
import { assertAccounting, assertCommittedShardsIntact, mtimesOf } from '../harness/datasetChecks.js';
import { failureLine } from '../harness/buildFailure.js';
import { mmif } from '../harness/mmifCli.js';
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
async function outcomes(buildId: string, root = output()) {
  const store = new LocalStore(root);
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
  const victims = new Set(tried.filter((r) => r.model_call).map((r) => r.id));
  console.log(`unusable replies rejected ${victims.size} of ${before.size} samples (${tried.length} rejects in all)`);
  assert.ok(victims.size > 0 && victims.size < before.size, `some samples lost to unusable replies, not all: ${victims.size}/${before.size}`);
  for (const r of tried.filter((t) => t.model_call)) {
    assert.match(r.reason, /^(instruction|constraints|compatibility|verifier|answer|rejected|judge): (empty-reply|truncated-reply|invalid-json): .*\(3 tries\)$/);
    assert.equal(r.model_call!.endpoint, stack.simulator.url);
  }
  // Manifests count them by the problem, whichever stage's call it was (a judge's included).
  const byReason: Record<string, number> = {};
  for (let shard = 0; shard < SHARDS; shard++) {
    const manifest = (await getJson<ShardManifest>(new LocalStore(output()), buildLayout('flaky').manifest(shard)))!;
    for (const [code, n] of Object.entries(manifest.rejectsByReason)) byReason[code] = (byReason[code] ?? 0) + n;
  }
  const problemCodes = ['empty-reply', 'truncated-reply', 'invalid-json'];
  assert.equal(
    problemCodes.reduce((n, code) => n + (byReason[code] ?? 0), 0),
    tried.filter((t) => t.model_call).length,
    JSON.stringify(byReason),
  );

  // The faults are gone. A new build on the same output (so the same model cache), same seed.
  stack.simulator.resetStats();
  const healthy = await run('healthy', config('healthy', { llm: { errorBudget: { maxFraction: 1, maxConsecutive: 100 } } }));
  assert.deepEqual(healthy.shards, { planned: SHARDS, committed: SHARDS, failed: 0 });
  const after = await outcomes('healthy');
  const paidFor = new Set([...after].filter(([, o]) => o.paid > 0).map(([id]) => id));
  assert.deepEqual([...paidFor].sort(), [...victims].sort(), 'requests were made for exactly the samples the faults rejected');
  assert.ok(stack.simulator.stats().requests > 0);
  for (const [id, o] of after) {
    assert.ok(!o.rejects.some((r) => r.model_call), `${id} is no longer rejected for a model call`);
    if (!victims.has(id)) assert.deepEqual(o.record, before.get(id)!.record, `${id} is the same as before, from the cache`);
  }
});

/** The raw text of every data line (instruct, DPO, reject) and stage state of a build, by record or state key. */
async function storedText(root: string, buildId: string): Promise<{ lines: Map<string, string>; states: Map<string, string>; manifests: string[] }> {
  const store = new LocalStore(root);
  const layout = buildLayout(buildId);
  const lines = new Map<string, string>();
  const states = new Map<string, string>();
  const manifests: string[] = [];
  for (let shard = 0; shard < SHARDS; shard++) {
    for (const [kind, key] of [
      ['instruct', layout.instructJsonl(shard)],
      ['dpo', layout.dpoJsonl(shard)],
      ['reject', layout.rejects(shard)],
    ] as const) {
      for (const line of ((await store.get(key))?.toString() ?? '').split('\n').filter(Boolean)) {
        const { id, kind: rejectKind } = JSON.parse(line) as { id: string; kind?: string };
        lines.set(`${kind} ${rejectKind ?? ''} ${id}`, line);
      }
    }
    for (const sample of (await getJson<SourceSample[]>(store, layout.shardPlan(shard)))!) {
      for (const stage of STAGE_NAMES) {
        const body = await store.get(layout.stageState(sample.sampleId, stage));
        if (body) states.set(`${sample.sampleId}/${stage}`, body.toString());
      }
    }
    manifests.push((await store.get(layout.manifest(shard)))!.toString());
  }
  return { lines, states, manifests };
}

/** Rejections of the given samples that are not model-call ones: decided on the samples' merits. */
const verdictRejectsOf = (found: Awaited<ReturnType<typeof outcomes>>, ids: Set<string>) =>
  [...found].filter(([id]) => ids.has(id)).reduce((n, [, o]) => n + o.rejects.filter((r) => !r.model_call).length, 0);

/** Calls a stage state records as paid (not cache hits). */
const paidCalls = (state: string | undefined) => (state ? (JSON.parse(state) as StageState).calls.filter((c) => !c.cached).length : 0);

/** Paid requests of a build report, over every stage. */
const paidRequests = (report: BuildReport) => Object.values(report.usage).reduce((n, u) => n + u.requests - u.cachedRequests, 0);

test('re-running the same build after the faults cleared regenerates exactly the samples they rejected in committed shards; a third run makes no request and writes nothing', async () => {
  const root = path.join(dir, 'out-rerun');
  const input = config('rerun', { output: root, llm: { errorBudget: { maxFraction: 1, maxConsecutive: 100 } } });
  const file = path.join(dir, 'rerun.json');
  await writeFile(file, JSON.stringify(input));
  // 40% unusable: with 30%, whether any sample loses all three tries of a call (0 of 12 once the prompts changed) was left to the seeded draws.
  stack.simulator.setFaults({ rateMalformed: 0.2, rateTruncated: 0.2 });
  let built: Awaited<ReturnType<typeof mmif>>;
  try {
    built = await mmif(stack, 'build', '--config', file, '--wait');
  } finally {
    stack.simulator.setFaults({ rateMalformed: 0, rateTruncated: 0 });
  }
  assert.equal(built.code, 0, built.stderr + built.stdout);
  const first = JSON.parse((await new LocalStore(root).get(buildLayout('rerun').report))!.toString()) as BuildReport;
  assert.deepEqual(first.shards, { planned: SHARDS, committed: SHARDS, failed: 0 });
  await assertAccounting(new LocalStore(root), first);
  const before = await outcomes('rerun', root);
  const modelCallRejects = [...before.values()].flatMap((o) => o.rejects.filter((r) => r.model_call));
  const victims = new Set(modelCallRejects.map((r) => r.id));
  assert.ok(victims.size > 0 && victims.size < before.size, `some samples lost to unusable replies, not all: ${victims.size}/${before.size}`);
  const stored = await storedText(root, 'rerun');
  const manifestsBefore = stored.manifests.map((m) => JSON.parse(m) as ShardManifest);
  assert.equal(
    manifestsBefore.reduce((n, m) => n + m.modelCallRejects!, 0),
    modelCallRejects.length,
    'manifests count the model-call rejections',
  );
  assert.equal(first.modelCallRejects, modelCallRejects.length, 'so does the build report');
  assert.match(built.stdout, new RegExp(`\\n${modelCallRejects.length} of the rejections were caused by model-call errors .*\`mmif resume rerun\` once the endpoint is fixed`));
  assert.ok(manifestsBefore.every((m) => m.revision === 1 && m.revising === undefined));
  const reopened = manifestsBefore.filter((m) => m.modelCallRejects! > 0).map((m) => m.shard);

  // The same build id again, as an operator would: `mmif resume` restarts it with its own config.
  stack.simulator.resetStats();
  const resumed = await mmif(stack, 'resume', 'rerun', '--wait');
  assert.equal(resumed.code, 0, resumed.stderr + resumed.stdout);
  const store = new LocalStore(root);
  const report = JSON.parse((await store.get(buildLayout('rerun').report))!.toString()) as BuildReport;
  // Re-committed shards (their next revision) still account for every sample.
  await assertAccounting(store, report);
  const requests = stack.simulator.stats().requests;
  const accepted = (r: BuildReport) => `${r.counts.instruct} instruct + ${r.counts.dpo} DPO`;
  console.log(
    `re-run: ${victims.size} samples rejected by faults (${modelCallRejects.length} samples or pairs) in shards ${reopened.join(', ')}; ${requests} requests; accepted ${accepted(first)} -> ${accepted(report)}`,
  );

  const restored = await storedText(root, 'rerun');
  const victimOf = (key: string) => victims.has(key.split('/')[0]!) || victims.has(key.split(' ').pop()!.replace(/-dpo$/, ''));
  // Only the victims' stage states changed, and the requests made are exactly their new paid calls.
  let paidForVictims = 0;
  for (const [key, state] of restored.states) {
    if (!victimOf(key)) assert.equal(state, stored.states.get(key), `${key} untouched`);
    else paidForVictims += paidCalls(state) - paidCalls(stored.states.get(key));
  }
  assert.ok(requests > 0);
  assert.equal(requests, paidForVictims, 'every request was a call for a sample the faults had rejected');
  // Nothing paid before is lost from the accounts: the new requests come on top.
  assert.equal(paidRequests(report), paidRequests(first) + requests);

  // Every other record is byte for byte what it was; the victims are now decided on their merits.
  for (const [key, line] of stored.lines) if (!victimOf(key)) assert.equal(restored.lines.get(key), line, `${key} unchanged`);
  for (const [key, line] of restored.lines) if (!victimOf(key)) assert.equal(stored.lines.get(key), line, `${key} was there before`);
  const after = await outcomes('rerun', root);
  assert.equal(after.size, before.size);
  for (const [id, o] of after) {
    assert.ok(!o.rejects.some((r) => r.model_call), `${id} is no longer rejected for a model call`);
    assert.equal(Number(Boolean(o.record)) + o.rejects.filter((r) => r.kind === 'sample').length, 1, `${id} is either accepted or rejected, once`);
  }
  // A victim may have lost its sample or only its DPO pair: accepted records rise either way.
  assert.ok(report.counts.instruct + report.counts.dpo > first.counts.instruct + first.counts.dpo, `accepted ${accepted(first)} -> ${accepted(report)}`);
  assert.equal(
    report.counts.rejectedSamples + report.counts.rejectedPairs,
    first.counts.rejectedSamples + first.counts.rejectedPairs - modelCallRejects.length + verdictRejectsOf(after, victims),
  );
  assert.equal(report.counts.planned, report.counts.instruct + report.counts.rejectedSamples);
  assert.deepEqual(report.shards, { planned: SHARDS, committed: SHARDS, failed: 0 });
  assert.equal(report.modelCallRejects, 0);

  // The re-opened shards are committed again as revision 2; the others were not touched.
  const manifestsAfter = restored.manifests.map((m) => JSON.parse(m) as ShardManifest);
  for (const [shard, manifest] of manifestsAfter.entries()) {
    if (reopened.includes(shard)) assert.deepEqual([manifest.revision, manifest.modelCallRejects, manifest.revising], [2, 0, undefined]);
    else assert.equal(restored.manifests[shard], stored.manifests[shard], `shard ${shard} had nothing to regenerate`);
  }
  await assertCommittedShardsIntact(store, 'rerun', SHARDS);

  // A third run: nothing left to regenerate, so no request and no write anywhere in the output.
  const mtimes = await mtimesOf(root);
  stack.simulator.resetStats();
  const third = await run('rerun', input);
  assert.deepEqual(third.counts, report.counts);
  assert.equal(stack.simulator.stats().requests, 0);
  assert.deepEqual(await mtimesOf(root), mtimes, 'no object written or rewritten');

  // A worker killed in the middle of a re-commit: the mark is on the manifest, a data file already
  // rewritten (here: clobbered). The next run repairs it, even with re-running rejections turned off.
  const shard = reopened[0]!;
  const layout = buildLayout('rerun');
  const standing = (await getJson<ShardManifest>(store, layout.manifest(shard)))!;
  await store.put(layout.manifest(shard), JSON.stringify({ ...standing, revising: 3 }));
  const good = (await store.get(layout.instructJsonl(shard)))!;
  await store.put(layout.instructJsonl(shard), 'half a rewrite\n');
  stack.simulator.resetStats();
  const repaired = await run('rerun', { ...input, llm: { ...input.llm, rerunModelCallRejects: false } });
  assert.equal(stack.simulator.stats().requests, 0, 'nothing to ask: every stage state is final');
  assert.deepEqual(repaired.counts, report.counts);
  const manifest = (await getJson<ShardManifest>(store, layout.manifest(shard)))!;
  assert.deepEqual([manifest.revision, manifest.revising], [3, undefined]);
  assert.deepEqual(await store.get(layout.instructJsonl(shard)), good, 'the same bytes as revision 2');
  await assertCommittedShardsIntact(store, 'rerun', SHARDS);
});

test('an endpoint answering 400 to everything fails its shards with the endpoint, status and error; a re-run recovers', async () => {
  // Its own output, so no cached reply of the builds above answers for the endpoint.
  const refusedOutput = path.join(dir, 'out-refused');
  const input = config('refused', { output: refusedOutput, llm: { preflight: false }, maxParallelShards: 3 });
  stack.simulator.setFaults({ rate400: 1 });
  try {
    await assert.rejects(run('refused', input), (err: unknown) => {
      assert.ok(err instanceof WorkflowFailedError);
      assert.match(String(err.cause?.message), /3 of 3 shards failed/);
      return true;
    });
  } finally {
    stack.simulator.setFaults({ rate400: 0 });
  }
  const report = JSON.parse((await new LocalStore(refusedOutput).get(buildLayout('refused').report))!.toString()) as BuildReport;
  assert.equal(report.failedShards.length, SHARDS);
  for (const failed of report.failedShards) {
    assert.match(
      failed.error,
      new RegExp(
        `^shard ${failed.shard}: 4 of 4 samples rejected by model-call errors, over the error budget \\(llm.errorBudget.maxFraction 0.2\\); ` +
          `first: model endpoint ${stack.simulator.url.replace(/\./g, '\\.')} \\(model mmif-sim-vlm\\): HTTP 400: invalid_request: Simulated invalid request: the endpoint refuses this request\\., 1 try$`,
      ),
    );
  }
  // Every planned sample sits in a failed shard: uncommitted, not lost.
  await assertAccounting(new LocalStore(refusedOutput), report);
  assert.equal(report.accounting[0]!.uncommitted, report.accounting[0]!.planned);

  // The endpoint is fixed: re-running the build tries the refused samples again and commits.
  const rerun = await stack.client.workflow.execute('buildDataset', {
    taskQueue: stack.taskQueue,
    workflowId: 'refused',
    args: [input],
    workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
  });
  assert.deepEqual((rerun as BuildReport).shards, { planned: SHARDS, committed: SHARDS, failed: 0 });
  assert.ok((rerun as BuildReport).counts.instruct > 0);
  await assertAccounting(new LocalStore(refusedOutput), rerun as BuildReport);
});

test('llm.errorBudget.maxConsecutive stops a slice after that many model-call rejections in a row, before trying the rest', async () => {
  // One shard, one slice, an endpoint of one slot: the slice's samples take the worker's
  // LANES_PER_SLOT lanes (domain/sampleLanes.ts), so only those holding one can be sent when the third
  // rejection stops the slice.
  const input = config('in-a-row', {
    output: path.join(dir, 'out-in-a-row'),
    shardSize: 12,
    sliceSize: 12,
    models: { default: { model: 'mmif-sim-vlm', concurrency: 1 } },
    llm: { preflight: false, errorBudget: { maxFraction: 1, maxConsecutive: 3 } },
  });
  stack.simulator.setFaults({ rate400: 1 });
  stack.simulator.resetStats();
  try {
    await assert.rejects(run('in-a-row', input), (err: unknown) => {
      assert.equal(
        failureLine(err),
        `1 of 1 shards failed (report: ${path.join(dir, 'out-in-a-row', 'in-a-row', 'build-report.json')}): shard 0: stage instruction: 3 samples in a row rejected by model-call errors ` +
          `(llm.errorBudget.maxConsecutive 3): model endpoint ${stack.simulator.url} (model mmif-sim-vlm): HTTP 400: invalid_request: Simulated invalid request: the endpoint refuses this request., 1 try`,
      );
      return true;
    });
  } finally {
    stack.simulator.setFaults({ rate400: 0 });
  }
  // Sent: the 3 rejected in a row, and at most the samples that held the other lanes meanwhile.
  const sent = stack.simulator.stats().requests;
  assert.ok(sent >= 3 && sent <= 3 + LANES_PER_SLOT, `${sent} of 12 samples were sent to the refusing endpoint`);
});

/** The model roles a pre-flight checks for a config with one model (llm/preflight.ts: all but richness, which these sources do not use). */
const EVERY_ROLE = 'instruction, constraints, compatibility, verifier, answer, rejected, judge';

/** The line a refused key gives, from the pre-flight (the roles it checked) or mid-build (the role, or its Batch API call). */
const keyRefused = (who: string, url: string) =>
  `${who}: model endpoint ${url} (model mmif-sim-vlm): HTTP 401: invalid_api_key: Incorrect API key provided: ***. You can find your API key at https://platform.openai.com/account/api-keys. ` +
  '— the API key was refused: check the key in OPENAI_API_KEY (the variable named by apiKeyEnv)';

/** Endpoint setups a pre-flight must refuse, with the line it must print (given the endpoint's URL): exact where it is one line of ours. */
const MISCONFIGURED: Array<{
  name: string;
  faults: Parameters<Stack['simulator']['setFaults']>[0];
  models: BuildConfigInput['models'];
  message: (url: string) => string | RegExp;
}> = [
  {
    name: 'wrong key',
    faults: { requiredApiKey: 'sk-the-right-key-0123456789' },
    models: { default: { model: 'mmif-sim-vlm' } },
    message: (url) => keyRefused(EVERY_ROLE, url),
  },
  {
    name: 'unknown model',
    faults: { knownModels: ['mmif-sim-vlm', 'mmif-sim-llm'] },
    models: { default: { model: 'mmif-sim-vlm' }, judge: { model: 'mmif-sim-vlm-typo' } },
    message: (url) =>
      `judge: model endpoint ${url} (model mmif-sim-vlm-typo): HTTP 404: model_not_found: The model \`mmif-sim-vlm-typo\` does not exist or you do not have access to it. ` +
      "— unknown model or wrong base URL: check the model name mmif-sim-vlm-typo (models.<role>.model) and baseUrl (or the worker's OPENAI_BASE_URL)",
  },
  {
    name: 'text-only model',
    faults: { textOnlyModels: ['mmif-sim-llm'] },
    // Text-only stages may use it; the answer stage sends images.
    models: { default: { model: 'mmif-sim-vlm' }, compatibility: { model: 'mmif-sim-llm' }, answer: { model: 'mmif-sim-llm' } },
    message: () => /\(model mmif-sim-llm\): HTTP 400: .*does the model accept image input\? \(images are sent by: answer\)/,
  },
  {
    name: 'spent quota',
    faults: { insufficientQuota: true },
    models: { default: { model: 'mmif-sim-vlm' } },
    message: (url) =>
      `${EVERY_ROLE}: model endpoint ${url} (model mmif-sim-vlm): HTTP 429: insufficient_quota: You exceeded your current quota, please check your plan and billing details. ` +
      '— the account is out of quota or credit: check the plan and billing of the account whose key is in OPENAI_API_KEY',
  },
];

/** `text` is `line` exactly (a string), or matches it (a pattern). */
function assertLine(text: string, line: string | RegExp): void {
  if (typeof line === 'string') assert.equal(text, line);
  else assert.match(text, line);
}

const WRONG_KEY = 'sk-a-wrong-key-abcdef987654';

async function withSetup<T>(faults: Parameters<Stack['simulator']['setFaults']>[0], work: () => Promise<T>): Promise<T> {
  const key = process.env.OPENAI_API_KEY;
  process.env.OPENAI_API_KEY = WRONG_KEY;
  stack.simulator.setFaults(faults);
  try {
    return await work();
  } finally {
    stack.simulator.setFaults({ requiredApiKey: '', knownModels: [], textOnlyModels: [], insufficientQuota: false });
    if (key === undefined) delete process.env.OPENAI_API_KEY;
    else process.env.OPENAI_API_KEY = key;
  }
}

test('pre-flight through `mmif build`: a wrong key, an unknown model, a text-only model, a spent quota exit 2 before any build starts, naming endpoint, model and status', async () => {
  for (const [i, setup] of MISCONFIGURED.entries()) {
    const buildId = `preflight-cli-${i}`;
    const file = path.join(dir, `${buildId}.json`);
    await writeFile(file, JSON.stringify(config(buildId, { output: path.join(dir, buildId), models: setup.models })));
    const started = Date.now();
    const result = await withSetup(setup.faults, () => mmif(stack, 'build', '--config', file));
    const seconds = (Date.now() - started) / 1000;
    console.log(`mmif build, ${setup.name}: exit ${result.code} after ${seconds.toFixed(1)} s`);
    assert.equal(result.code, 2, result.stdout + result.stderr);
    const failed = result.stderr.split('\n').find((line) => line.startsWith('mmif: pre-flight failed: '));
    assertLine(
      String(failed),
      typeof setup.message(stack.simulator.url) === 'string' ? `mmif: pre-flight failed: ${setup.message(stack.simulator.url) as string}` : setup.message(stack.simulator.url),
    );
    assert.doesNotMatch(result.stderr + result.stdout, new RegExp(WRONG_KEY), 'the key is masked');
    await assert.rejects(stack.client.workflow.getHandle(buildId).describe(), 'no build was started');
  }
});

test('pre-flight in the workflow, for `temporal workflow start` users: fails before planning, in seconds, non-retryably', async () => {
  for (const [i, setup] of MISCONFIGURED.entries()) {
    const buildId = `preflight-wf-${i}`;
    const buildOutput = path.join(dir, buildId);
    const started = Date.now();
    await withSetup(setup.faults, () =>
      assert.rejects(run(buildId, config(buildId, { output: buildOutput, models: setup.models })), (err: unknown) => {
        assertLine(failureLine(err), setup.message(stack.simulator.url));
        assert.doesNotMatch(failureLine(err), new RegExp(WRONG_KEY));
        return true;
      }),
    );
    const seconds = (Date.now() - started) / 1000;
    console.log(`workflow, ${setup.name}: failed after ${seconds.toFixed(1)} s`);
    // Nothing was planned: the output holds at most the model cache and, in the build's folder, the
    // spend ledger of the checks that passed (paid requests, counted: docs/cost.md); the pre-flight's
    // write probe (storage/outputProbe.ts) leaves nothing.
    const files = (await readdir(buildOutput, { recursive: true }).catch(() => [] as string[])).filter((name) => !name.startsWith('_cache'));
    const written = files.filter((name) => !['', buildId, `${buildId}/_work`, `${buildId}/_work/spend`].includes(name) && !name.startsWith(`${buildId}/_work/spend/`));
    assert.deepEqual(written, [], `${setup.name}: ${files.join(', ')}`);
  }
});

for (const batch of [false, true]) {
  test(`without the pre-flight, a refused key fails the build in seconds, non-retryably, naming the endpoint (no minutes of retries)${batch ? ': Batch API' : ''}`, async () => {
    const buildId = batch ? 'key-mid-build-batch' : 'key-mid-build';
    const buildOutput = path.join(dir, buildId);
    const input = config(buildId, { output: buildOutput, maxParallelShards: 3, llm: { preflight: false }, models: { default: { model: 'mmif-sim-vlm', batch } } });
    // The first model call of every sample is the instruction stage's: on the Batch API, the upload of its requests.
    const line = keyRefused(batch ? 'instruction: Batch API POST /files' : 'instruction', stack.simulator.url);
    stack.simulator.resetStats();
    const started = Date.now();
    let failed = '';
    await withSetup({ requiredApiKey: 'sk-the-right-key-0123456789' }, () =>
      assert.rejects(run(buildId, input), (err: unknown) => {
        // The shards in the order they failed, as the report lists them.
        const order = [...failureLine(err).matchAll(/shard (\d): instruction/g)].map((m) => Number(m[1]));
        assert.deepEqual([...order].sort(), [0, 1, 2]);
        const shards = order.map((shard) => `shard ${shard}: ${line}`).join('; ');
        failed = `3 of 3 shards failed (report: ${path.join(buildOutput, buildId, 'build-report.json')}): ${shards}`;
        assert.equal(failureLine(err), failed);
        return true;
      }),
    );
    const seconds = (Date.now() - started) / 1000;
    // Where the user looks: `mmif status` ends with the same line, and exits 2 (every shard failed on the key, an input error).
    const status = await mmif(stack, 'status', buildId);
    assert.equal(status.code, 2, status.stdout + status.stderr);
    assert.equal(status.stderr.trim().split('\n').at(-1), `mmif: build ${buildId} failed: ${failed}`);
    console.log(`refused key without pre-flight${batch ? ' (Batch API)' : ''}: build failed after ${seconds.toFixed(1)} s, ${stack.simulator.stats().requests} chat requests`);
    // At most one refused request per sample (12), none retried: Temporal's activity retries would multiply them.
    assert.ok(stack.simulator.stats().requests <= 3 * 4, `${stack.simulator.stats().requests} requests`);
  });
}
