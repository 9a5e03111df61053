/**
 * Builds against an endpoint that misbehaves as real gateways and proxies do (test/harness/
 * hostileEndpoint.ts, in front of the simulator), on one stack (Temporal dev server, a worker in
 * this process, the `mmif` CLI): a key echoed in every encoding, with every file, log and history
 * payload the build produced scanned for it afterwards (test/harness/canaryScan.ts).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BuildConfigInput } from '../../config/buildConfig.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { LocalStore } from '../../storage/localStore.js';
import { getJson } from '../../storage/objectStore.js';
import { writeCc3m } from '../fixtures/cc3m.js';
import { captureLogs, filesText, historiesText, leakingFiles, leaks } from '../harness/canaryScan.js';
import { startHostileEndpoint, type HostileEndpoint } from '../harness/hostileEndpoint.js';
import { mmif } from '../harness/mmifCli.js';
import { eventually } from '../harness/datasetChecks.js';
import { paidSpend } from '../../output/reports/buildReport.js';
import { startStack, type Stack } from '../harness/stack.js';

let stack: Stack;
let hostile: HostileEndpoint;
let dir: string;

before(async () => {
  stack = await startStack({ simulator: { seed: 23 }, taskQueue: 'mmif-hostile' });
  hostile = await startHostileEndpoint(stack.simulator.url);
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-hostile-e2e-'));
  await writeCc3m(new LocalStore(path.join(dir, 'cc3m')), 'files', { perShard: 4, shards: 1 });
});

after(async () => {
  await hostile?.close();
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const KEY_VARIABLE = 'MMIF_HOSTILE_KEY';

const config = (buildId: string, more: Partial<BuildConfigInput> = {}): BuildConfigInput => ({
  buildId,
  seed: 11,
  output: path.join(dir, buildId),
  sources: [{ type: 'cc3m', uri: path.join(dir, 'cc3m') }],
  maxSamples: 4,
  shardSize: 4,
  models: { default: { model: 'mmif-sim-vlm', baseUrl: hostile.url, apiKeyEnv: KEY_VARIABLE } },
  ...more,
});

for (const key of ['sk-hostile/Canary+5f3a9c17=e2d8', 'Zq7shrt']) {
  test(`a key (${key.length} characters) echoed plain, base64 and URL-encoded in a refusal reaches no file, log or history payload of the build, nor the CLI's output`, async () => {
    process.env[KEY_VARIABLE] = key;
    const buildId = `canary-${key.length}`;
    hostile.set({ echoKey: true });
    const logs = captureLogs();
    let cli: Awaited<ReturnType<typeof mmif>>;
    let status: Awaited<ReturnType<typeof mmif>>;
    try {
      const file = path.join(dir, `${buildId}.json`);
      await writeFile(file, JSON.stringify(config(buildId)));
      cli = await mmif(stack, 'build', '--config', file, '--wait');
      status = await mmif(stack, 'status', buildId);
    } finally {
      logs.stop();
      hostile.set({});
    }
    assert.equal(cli.code, 0, cli.stdout + cli.stderr);
    const output = path.join(dir, buildId);
    const report = (await getJson<BuildReport>(new LocalStore(output), buildLayout(buildId).report))!;
    // The refusal was learned (temperature dropped) and its words kept, the key blanked in them.
    const lesson = report.endpointDialects?.[0]?.lessons.find((l) => l.startsWith('temperature'));
    assert.ok(lesson?.includes('***'), JSON.stringify(report.endpointDialects));
    const dialects = [...(await filesText(path.join(output, '_cache', 'llm', 'dialects'))).values()].join('\n');
    assert.ok(dialects.includes('"lessons"') && !dialects.includes('apiKey'), `no credential field in the dialect cache: ${dialects}`);
    assert.deepEqual(await leakingFiles(output, key), [], 'the key in an output file');
    const scanned = {
      log: logs.text(),
      cli: cli.stdout + cli.stderr + status.stdout + status.stderr,
      history: await historiesText(stack.client, buildId),
    };
    assert.ok(scanned.history.includes(`lessons`), 'payloads read');
    for (const [where, text] of Object.entries(scanned)) assert.deepEqual(leaks(text, key), [], `the key in the ${where}`);
    delete process.env[KEY_VARIABLE];
  });
}

test('a config value holding the key (a decontamination set under a folder named like it) enters the workflow input masked, by the client', async () => {
  const key = 'Dk9shrt';
  process.env[KEY_VARIABLE] = key;
  try {
    const input = config('key-in-path', { decontaminate: [{ name: 'bench', uri: path.join(dir, key, 'bench.jsonl'), format: 'jsonl' }] as BuildConfigInput['decontaminate'] });
    const handle = await stack.client.workflow.start('buildDataset', { taskQueue: 'mmif-hostile-nobody-polls', workflowId: 'key-in-path', args: [input] });
    const history = await historiesText(stack.client, 'key-in-path');
    await handle.terminate();
    assert.match(history, /\[secret MMIF_HOSTILE_KEY\]/);
    assert.deepEqual(leaks(history, key), []);
  } finally {
    delete process.env[KEY_VARIABLE];
  }
});

/** Every number in a JSON value: each must be finite and non-negative, and no count may be a string. */
function assertFigures(value: unknown, where: string): void {
  const walk = (v: unknown, at: string): void => {
    if (typeof v === 'number') assert.ok(Number.isFinite(v) && v >= 0, `${where} ${at}: ${v}`);
    else if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${at}[${i}]`));
    else if (typeof v === 'object' && v !== null) for (const [k, x] of Object.entries(v)) walk(x, `${at}.${k}`);
  };
  walk(value, '');
  assert.doesNotMatch(JSON.stringify(value), /lots|NaN|Infinity|e\+\d/, where);
}

const NONSENSE: Array<(u: Record<string, unknown>) => unknown> = [
  (u) => ({ ...u, prompt_tokens_details: { cached_tokens: -2_000_000 } }),
  (u) => ({ ...u, prompt_tokens: -2_000_000 }),
  (u) => ({ ...u, completion_tokens: 2e300 }),
  (u) => ({ ...u, prompt_tokens: 'lots', completion_tokens: 'lots' }),
];

test('nonsense usage on a priced model: the build completes with finite figures, paying each request once; a budget below its cost stops it, and the report, card and status show what was paid beside the committed share', async () => {
  let n = 0;
  hostile.set({ usage: (u) => NONSENSE[n++ % NONSENSE.length]!(u) });
  hostile.reset();
  const priced = { models: { default: { model: 'gpt-4o', baseUrl: hostile.url } } };
  const full = (await stack.client.workflow.execute('buildDataset', {
    taskQueue: stack.taskQueue,
    workflowId: 'usage-full',
    args: [config('usage-full', priced)],
  })) as BuildReport;
  assert.deepEqual(full.shards, { planned: 1, committed: 1, failed: 0 });
  assertFigures(full.usage, 'report usage');
  assertFigures(full.cost, 'report cost');
  assert.ok(Object.values(full.usage).reduce((s, u) => s + u.estimatedRequests, 0) > 0, 'estimated requests counted');
  assert.equal(full.cost.paid?.requests, hostile.counts().paid, 'every request the endpoint answered paid and counted once');
  assert.ok(full.cost.paid!.usd > 0);
  const fullOutput = path.join(dir, 'usage-full');
  const manifests = await filesText(fullOutput);
  for (const [file, text] of manifests) if (file.includes('manifest')) assertFigures(JSON.parse(text), file);

  // Held to a third of that, with the same nonsense: it stops, and says what it paid.
  const maxUsd = Number((full.cost.paid!.usd / 3).toFixed(6));
  hostile.reset();
  const file = path.join(dir, 'usage-budget.json');
  await writeFile(file, JSON.stringify(config('usage-budget', { ...priced, llm: { budget: { maxUsd } } })));
  const stopped = await mmif(stack, 'build', '--config', file, '--wait');
  assert.equal(stopped.code, 1, stopped.stdout + stopped.stderr);
  assert.match(stopped.stdout, /^STOPPED: budget exhausted: \$\d+\.\d{4} of \$\d+\.\d{4} spent/m);
  // Slices still running when the build failed end at the budget too; what they paid is counted.
  await eventually(() => stack.activitiesInFlight() === 0, 120_000, 'the last slices to end');
  hostile.set({});
  const store = new LocalStore(path.join(dir, 'usage-budget'));
  const ledger = await paidSpend(store, buildLayout('usage-budget'));
  assert.equal(ledger.requests, hostile.counts().paid, 'every request the endpoint answered counted once, committed or not');
  const report = (await getJson<BuildReport>(store, buildLayout('usage-budget').report))!;
  assertFigures(report.cost, 'stopped report cost');
  assert.ok(report.cost.paid!.requests <= ledger.requests && report.cost.paid!.requests > 0);
  assert.ok(report.cost.paid!.usd >= maxUsd && report.cost.paid!.usd > report.cost.usd, JSON.stringify(report.cost));
  // The simulator's replies may make the build a simulated one: its figures are then what the calls would cost.
  const paidLine = ({ usd, requests }: { usd: number; requests: number }, committedUsd?: number) => {
    const [paid, committed] = [usd, committedUsd].map((n) => (n === undefined ? '\\d+\\.\\d{4}' : n.toFixed(4).replace('.', '\\.')));
    return new RegExp(
      `(paid \\$${paid} for ${requests} requests|all ${requests} requests would cost \\$${paid}) \\(all runs, committed or not\\), \\$${committed} of it in committed shards`,
    );
  };
  const card = (await store.get(buildLayout('usage-budget').datasetCard))?.toString() ?? '';
  assert.match(card, paidLine(report.cost.paid!, report.cost.usd), 'the card: what was paid when the build stopped');
  const status = await mmif(stack, 'status', 'usage-budget');
  // Beside it, the committed shards' share as the progress counts it (the report adds the pre-flight's).
  assert.match(status.stdout, paidLine(ledger), 'mmif status: what was paid, read now');
});

test('a 100,000-second Retry-After stalls the build no longer than llm.maxRetryAfterSeconds: pre-flight reports it, the build completes, no TimeoutOverflowWarning', async () => {
  const warnings: Error[] = [];
  const onWarning = (w: Error) => warnings.push(w);
  process.on('warning', onWarning);
  // The checks' pre-flight, the build's own, and one request of a slice are asked to wait 27.8 hours.
  hostile.set({ rateLimit: { headers: { 'retry-after': '100000' }, times: 3 } });
  hostile.reset();
  let built: Awaited<ReturnType<typeof mmif>>;
  try {
    const file = path.join(dir, 'retry-after.json');
    await writeFile(file, JSON.stringify(config('retry-after', { llm: { maxRetryAfterSeconds: 2 } })));
    built = await mmif(stack, 'build', '--config', file, '--wait');
  } finally {
    process.off('warning', onWarning);
    hostile.set({});
  }
  assert.equal(built.code, 0, built.stdout + built.stderr);
  assert.match(
    built.stderr,
    /^pre-flight: model endpoint \S+ \(model mmif-sim-vlm\): HTTP 429: asked to wait 100000 s \(27\.8 h\), beyond llm\.maxRetryAfterSeconds \(2 s\): the endpoint refuses requests for now; starting anyway: its calls are retried for up to about 8\.2 min of back-off \(llm\.retry\.maxAttempts 6 tries per call, retry\.maximumAttempts 8 attempts per shard\) before the build gives up$/m,
  );
  assert.ok(hostile.counts().requests > 3, 'the build went on past the refusals');
  assert.deepEqual(
    warnings.map((w) => `${w.name}: ${w.message}`),
    [],
  );
});
