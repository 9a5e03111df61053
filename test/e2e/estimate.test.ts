/**
 * `mmif estimate` against real components (Temporal dev server, a worker, the simulator over HTTP,
 * the CLI): with a model name the price table knows, its forecast of a quickstart-sized build's
 * cost and requests lands within ±25% of what the build then makes, and the build pays nothing
 * again for the pilot's calls.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BuildConfigInput } from '../../config/buildConfig.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import type { Forecast } from '../../output/reports/forecast.js';
import { LocalStore } from '../../storage/localStore.js';
import { writeCc3m } from '../fixtures/cc3m.js';
import { mmif } from '../harness/mmifCli.js';
import { startStack, type Stack } from '../harness/stack.js';

let stack: Stack;
let dir: string;

before(async () => {
  stack = await startStack({ simulator: { seed: 23 }, taskQueue: 'mmif-estimate' });
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-estimate-'));
  await writeCc3m(new LocalStore(path.join(dir, 'cc3m')), 'files', { perShard: 5, shards: 4 });
});

after(async () => {
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const within = (actual: number, forecast: number, what: string) =>
  assert.ok(Math.abs(forecast - actual) <= 0.25 * actual, `${what}: forecast ${forecast}, actual ${actual} (${((forecast / actual - 1) * 100).toFixed(1)}%)`);

test('the pilot forecasts the build within ±25% in cost and requests, and the build pays nothing again for it', async () => {
  const config: BuildConfigInput = {
    buildId: 'estimated',
    seed: 4,
    output: path.join(dir, 'out'),
    sources: [{ type: 'cc3m', uri: path.join(dir, 'cc3m') }],
    maxSamples: 20,
    shardSize: 5,
    sliceSize: 5,
    // A name the price table knows (OpenAI's gpt-4o-mini), served by the simulator: a priced forecast.
    models: { default: { model: 'gpt-4o-mini' } },
    llm: { preflight: false },
  };
  const file = path.join(dir, 'build.json');
  await writeFile(file, JSON.stringify(config));

  const estimated = await mmif(stack, 'estimate', '--config', file, '--pilot', '8', '--json');
  assert.equal(estimated.code, 0, estimated.stderr);
  // Nothing but the forecast on stdout: the pilot's line goes to stderr.
  const forecast = JSON.parse(estimated.stdout) as Forecast & { preview: string };
  assert.match(estimated.stderr, /^pilot: 8 samples of estimated as build estimated-pilot-8/m);
  assert.equal(forecast.preview, path.join(dir, 'out', '_estimate', 'estimated-pilot-8', 'viewer.html'), "the pilot's viewer: a preview of the build");
  assert.ok(forecast.available === undefined && forecast.perSample.requests > 0);
  assert.equal(forecast.pilot.samples, 8);
  assert.equal(forecast.samples, 20);
  assert.ok(forecast.usd > 0 && forecast.simulated);
  assert.deepEqual(forecast.unpriced, []);
  assert.ok(forecast.usdInterval[0] <= forecast.usd && forecast.usd <= forecast.usdInterval[1]);

  const before = stack.simulator.stats().requests;
  const report = (await stack.client.workflow.execute('buildDataset', { taskQueue: stack.taskQueue, workflowId: 'estimated', args: [config] })) as BuildReport;
  const paidNow = stack.simulator.stats().requests - before;
  const requests = Object.values(report.usage).reduce((n, u) => n + u.requests, 0);
  const cached = Object.values(report.usage).reduce((n, u) => n + u.cachedRequests, 0);
  // Every pilot call is a cache hit of the build (and a few more: identical requests within the build, e.g. verifier selection).
  assert.ok(cached >= forecast.pilot.requests, `${cached} cache hits, ${forecast.pilot.requests} pilot calls`);
  assert.equal(paidNow, requests - cached);
  // What the whole build costs at the table's prices: paid now plus what its cache hits saved.
  const usd = report.cost.usd + report.cost.savedUsd;
  console.log(`forecast ${forecast.requests} requests, $${forecast.usd.toFixed(6)}; actual ${requests} requests, $${usd.toFixed(6)}`);
  within(requests, forecast.requests, 'requests');
  within(usd, forecast.usd, 'USD');
  within(usd - report.cost.savedUsd, forecast.usdToPay, 'USD still to pay');
});

test("the config's size is forecast when the sources hold less: 23,000 samples over 20 records, with a line saying so", async () => {
  const config: BuildConfigInput = {
    buildId: 'paper-mix',
    seed: 4,
    output: path.join(dir, 'out'),
    sources: [{ type: 'cc3m', uri: path.join(dir, 'cc3m') }],
    maxSamples: 23_000,
    shardSize: 5,
    sliceSize: 5,
    models: { default: { model: 'gpt-4o-mini' } },
    llm: { preflight: false },
  };
  const file = path.join(dir, 'paper-mix.json');
  await writeFile(file, JSON.stringify(config));
  const json = await mmif(stack, 'estimate', '--config', file, '--pilot', '4', '--json');
  assert.equal(json.code, 0, json.stderr);
  const forecast = JSON.parse(json.stdout) as Forecast;
  assert.equal(forecast.samples, 23_000);
  assert.equal(forecast.available, 20, 'the sources hold 20 records');
  assert.ok(Math.abs(forecast.usd - 23_000 * forecast.perSample.usd) < 1e-6 * forecast.usd);
  const text = await mmif(stack, 'estimate', '--config', file, '--pilot', '4');
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /^full build \(the 23,000 samples the config asks for\): \d+ requests/m);
  assert.match(text.stdout, /^per sample: \$\d+\.\d{4} \(95% interval \$\d+\.\d{4} - \$\d+\.\d{4}\), \d+\.\d requests, \d+ input \+ \d+ output tokens$/m);
  assert.match(text.stdout, /^the sources hold 20 samples now: a build of this config plans those until they hold more \(the forecast is for 23,000\)$/m);
  assert.ok(text.stdout.includes(`preview: ${path.join(dir, 'out', '_estimate', 'paper-mix-pilot-4', 'viewer.html')}`), text.stdout);
});

test('a multiturn build and a targets build are forecast too: chats per sample, samples through the pilot yield', async () => {
  const common = {
    seed: 6,
    output: path.join(dir, 'out-kinds'),
    sources: [{ type: 'cc3m' as const, uri: path.join(dir, 'cc3m') }],
    shardSize: 2,
    sliceSize: 2,
    models: { default: { model: 'gpt-4o-mini' } },
    llm: { preflight: false },
  };
  const estimate = async (name: string, config: BuildConfigInput) => {
    const file = path.join(dir, `${name}.json`);
    await writeFile(file, JSON.stringify(config));
    const run = await mmif(stack, 'estimate', '--config', file, '--pilot', '2', '--json');
    assert.equal(run.code, 0, run.stderr);
    return JSON.parse(run.stdout) as Forecast;
  };
  const chats = await estimate('chats', { ...common, buildId: 'chats', mode: 'multiturn', chat: { turns: 3, maxInstructions: 2 }, maxSamples: 10 });
  assert.equal(chats.pilot.samples, 2);
  assert.equal(chats.samples, 10);
  assert.ok(chats.usd > 0 && chats.requests >= 10 * 3, `a chat of 3 turns makes a request per turn at least: ${chats.requests}`);

  const targeted = await estimate('targeted', { ...common, buildId: 'targeted', maxSamples: 20, targets: { instruct: 6 } });
  assert.equal(targeted.pilot.samples, 2);
  const expected = targeted.pilot.instruct === 0 ? 20 : Math.min(20, Math.ceil((6 * 2) / targeted.pilot.instruct));
  assert.equal(targeted.samples, expected, `6 SFT records at the pilot's yield (${targeted.pilot.instruct} of 2)`);
});
