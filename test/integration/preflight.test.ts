import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseBuildConfig, type BuildConfigInput } from '../../config/buildConfig.js';
import { BudgetExhausted, BuildBudget, writeBudget } from '../../llm/buildBudget.js';
import { EndpointError } from '../../llm/endpointError.js';
import { InputError } from '../../domain/errors.js';
import { SpendLedger } from '../../llm/spendLedger.js';
import { preflight, preflightTargets } from '../../llm/preflight.js';
import { startSimulator, type SimulatorHandle } from '../../simulator/server.js';
import { LocalStore } from '../../storage/localStore.js';
import { closedPort } from '../harness/closedPort.js';
import { rolesOnEnvBaseUrl } from '../../cli/localTemporal.js';

let sim: SimulatorHandle;
let dir: string;

before(async () => {
  sim = await startSimulator({ seed: 2 });
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-preflight-'));
});
after(async () => {
  await sim.close();
  await rm(dir, { recursive: true, force: true });
});

const config = (models: BuildConfigInput['models'], extra: Partial<BuildConfigInput> = {}) =>
  parseBuildConfig({ buildId: 'b', output: dir, sources: [{ type: 'cc3m', uri: '/x' }], maxSamples: 1, models, ...extra });

test('one target per distinct endpoint, model and key variable; images only where a stage sends them', () => {
  const targets = preflightTargets(
    config({
      default: { model: 'vlm', baseUrl: 'http://a/v1' },
      compatibility: { model: 'llm', baseUrl: 'http://b/v1' },
      verifier: { model: 'llm', baseUrl: 'http://b/v1' },
      rejected: { model: 'vlm', baseUrl: 'http://a/v1', apiKeyEnv: 'OTHER_KEY' },
    }),
  );
  assert.deepEqual(
    targets.map((t) => [t.endpoint.baseUrl, t.endpoint.model, t.endpoint.apiKeyEnv, t.roles, t.withImage]),
    [
      ['http://a/v1', 'vlm', 'OPENAI_API_KEY', ['instruction', 'constraints', 'answer', 'judge'], true],
      ['http://b/v1', 'llm', 'OPENAI_API_KEY', ['compatibility', 'verifier'], false],
      ['http://a/v1', 'vlm', 'OTHER_KEY', ['rejected'], true],
    ],
  );
  // Rejected answers of the no_image strategy go without the image.
  const noImage = preflightTargets(config({ default: { model: 'vlm' }, rejected: { model: 'llm' } }, { dpo: { strategies: ['no_image'] } }));
  assert.deepEqual(
    noImage.map((t) => [t.endpoint.model, t.withImage]),
    [
      ['vlm', true],
      ['llm', false],
    ],
  );
  // The richness tagger is checked, with an image, only when a source selects by VLM tag count.
  const tagger = { default: { model: 'vlm' }, richness: { model: 'tagger' } };
  assert.deepEqual(
    preflightTargets(config(tagger)).map((t) => t.endpoint.model),
    ['vlm'],
  );
  const tagging = preflightTargets(config(tagger, { sources: [{ type: 'cc3m', uri: '/x', richness: { scorer: 'vlm-tags', minTags: 5 } }] }));
  assert.deepEqual(tagging.map((t) => [t.endpoint.model, t.roles, t.withImage]).at(-1), ['tagger', ['richness'], true]);
});

test('a passed check is remembered in the cache: the next one makes no request; a text-only model is refused only with an image', async () => {
  const cache = new LocalStore(path.join(dir, 'cache'));
  const models = {
    default: { model: 'mmif-sim-vlm', baseUrl: sim.url },
    compatibility: { model: 'mmif-sim-llm', baseUrl: sim.url },
    verifier: { model: 'mmif-sim-llm', baseUrl: sim.url },
  };
  sim.setFaults({ textOnlyModels: ['mmif-sim-llm'] });
  try {
    sim.resetStats();
    const first = await preflight(config(models), cache, '_cache/llm');
    assert.deepEqual(
      first.map((o) => [o.model, o.withImage, o.cached]),
      [
        ['mmif-sim-vlm', true, false],
        ['mmif-sim-llm', false, false],
      ],
    );
    assert.equal(sim.stats().requests, 2);
    const second = await preflight(config(models), cache, '_cache/llm');
    assert.deepEqual(
      second.map((o) => o.cached),
      [true, true],
    );
    assert.equal(sim.stats().requests, 2, 'no request for what passed before');
    await assert.rejects(
      preflight(config({ ...models, judge: { model: 'mmif-sim-llm', baseUrl: sim.url } }), cache, '_cache/llm'),
      (err: unknown) => err instanceof EndpointError && err.fault.status === 400 && /image input\? \(images are sent by: judge\)$/.test(err.message),
    );
  } finally {
    sim.setFaults({ textOnlyModels: [] });
  }
});

test('an endpoint that cannot be reached is no misconfiguration: reported, not remembered, the build goes on', async () => {
  const cache = new LocalStore(path.join(dir, 'cache-down'));
  const models = { default: { model: 'mmif-sim-vlm', baseUrl: sim.url } };
  sim.setFaults({ rate500: 1 });
  try {
    const [outcome] = await preflight(config(models), cache, '_cache/llm');
    assert.match(outcome!.unreachable ?? '', /^model endpoint .* \(model mmif-sim-vlm\) is unreachable: 500 /);
  } finally {
    sim.setFaults({ rate500: 0 });
  }
  const [again] = await preflight(config(models), cache, '_cache/llm');
  assert.deepEqual([again!.cached, again!.unreachable], [false, undefined], 'checked again once reachable');
});

test('a closed port, an unknown host and https:// to a plain HTTP port fail the pre-flight at once with what the connection met, exit 2', async () => {
  const port = await closedPort();
  const simHost = new URL(sim.url).host;
  const cases: [string, RegExp][] = [
    [`http://127.0.0.1:${port}/v1`, new RegExp(`: nothing listens at 127\\.0\\.0\\.1:${port}: connection refused — check the baseUrl`)],
    // RFC 6761: names under .invalid never resolve. Where no DNS server answers, EAI_AGAIN persists instead.
    ['http://mmif-preflight.invalid/v1', /: host mmif-preflight\.invalid not found \(DNS: (ENOTFOUND|EAI_AGAIN)\) — check the baseUrl/],
    [
      sim.url.replace(/^http:/, 'https:'),
      new RegExp(`: TLS with ${simHost.replace(/\./g, '\\.')} failed: (EPROTO|ERR_SSL_\\w+): wrong version number — check the baseUrl .*its scheme`),
    ],
  ];
  for (const [baseUrl, line] of cases) {
    sim.resetStats();
    await assert.rejects(preflight(config({ default: { model: 'mmif-sim-vlm', baseUrl } }), new LocalStore(path.join(dir, 'cache-closed')), '_cache/llm'), (err: unknown) => {
      assert.ok(err instanceof EndpointError, String(err));
      assert.ok(err instanceof InputError, 'an input error: exit 2');
      assert.match(
        err.message,
        new RegExp(`^instruction, constraints, compatibility, verifier, answer, rejected, judge: model endpoint ${baseUrl.replace(/[.]/g, '\\.')} \\(model mmif-sim-vlm\\)`),
      );
      assert.match(err.message, line);
      assert.doesNotMatch(err.message, /\n/);
      return true;
    });
    assert.equal(sim.stats().requests, 0, `${baseUrl}: nothing reached a chat endpoint`);
  }
  // Set by the worker's OPENAI_BASE_URL rather than the config: the line says so.
  await assert.rejects(
    preflight(config({ default: { model: 'mmif-sim-vlm' } }), new LocalStore(path.join(dir, 'cache-closed')), '_cache/llm', {
      OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
      OPENAI_API_KEY: 'k',
    }),
    /connection refused — check the worker's OPENAI_BASE_URL \(these roles set no baseUrl\)$/,
  );
});

test('a missing API key for OpenAI fails the pre-flight at once, naming the variable', async () => {
  await assert.rejects(
    preflight(config({ default: { model: 'gpt-4o', apiKeyEnv: 'MMIF_TEST_NO_SUCH_KEY' } }), new LocalStore(path.join(dir, 'cache-nokey')), '_cache/llm', {}),
    (err: unknown) =>
      err instanceof EndpointError && /^model endpoint https:\/\/api\.openai\.com\/v1 \(model gpt-4o\): the API key variable MMIF_TEST_NO_SUCH_KEY is not set$/.test(err.message),
  );
});

test("the pre-flight's requests are admitted by the build's budget and counted in it; a spent budget sends none", async () => {
  const store = new LocalStore(path.join(dir, 'budget'));
  let now = 0;
  const budgetOf = () => new BuildBudget(store, 'b/_work/budget.json', new SpendLedger(store, 'b/_work/spend/', () => now), () => now);
  const models = { default: { model: 'mmif-sim-vlm', baseUrl: sim.url }, verifier: { model: 'mmif-sim-llm', baseUrl: sim.url } };
  const prices = {
    'mmif-sim-vlm': { inputPerMTok: 1000, outputPerMTok: 1000, batchDiscount: 0.5 },
    'mmif-sim-llm': { inputPerMTok: 1000, outputPerMTok: 1000, batchDiscount: 0.5 },
  };
  const priced = config(models, { llm: { prices } });
  await writeBudget(store, 'b/_work/budget.json', { maxUsd: 1 });
  sim.resetStats();
  const budget = budgetOf();
  const outcomes = await preflight(priced, new LocalStore(path.join(dir, 'cache-budget')), '_cache/llm', process.env, budget);
  assert.equal(sim.stats().requests, 2);
  await budget.ledger.flush();
  const spent = budget.ledger.total();
  assert.equal(spent.requests, 2, 'each answered pre-flight request is counted');
  const priceOf = (o: (typeof outcomes)[number]) => ((o.usage!.promptTokens + o.usage!.completionTokens) * 1000) / 1e6;
  assert.ok(Math.abs(spent.usd - outcomes.reduce((sum, o) => sum + priceOf(o), 0)) < 1e-12, `counted at their price: $${spent.usd}`);

  // Another worker spent the rest: a new pre-flight (here, with another key) sends nothing and fails with the budget's line.
  await new SpendLedger(store, 'b/_work/spend/', () => now).add({ usd: 1, requests: 1 });
  now += 1_000;
  process.env.MMIF_TEST_OTHER_KEY = 'sk-other';
  try {
    const otherKey = config({ default: { model: 'mmif-sim-vlm', baseUrl: sim.url, apiKeyEnv: 'MMIF_TEST_OTHER_KEY' } }, { llm: { prices } });
    await assert.rejects(
      preflight(otherKey, new LocalStore(path.join(dir, 'cache-budget')), '_cache/llm', process.env, budgetOf()),
      (err: unknown) => err instanceof BudgetExhausted && /^budget exhausted: \$1\.\d{4} of \$1\.0000 spent$/.test(err.message),
    );
  } finally {
    delete process.env.MMIF_TEST_OTHER_KEY;
  }
  assert.equal(sim.stats().requests, 2, 'no request once the budget is spent');
});

test('endpoints of several replicas are told apart by their replica lists, and count as naming their servers', () => {
  const targets = preflightTargets(
    config({
      default: { model: 'vlm', baseUrls: ['http://a/v1', 'http://b/v1'] },
      compatibility: { model: 'vlm', baseUrls: ['http://c/v1', 'http://d/v1'] },
      verifier: { model: 'vlm', baseUrls: ['http://c/v1', { baseUrl: 'http://d/v1', concurrency: 4 }] },
    }),
  );
  assert.deepEqual(
    targets.map((t) => t.roles),
    [
      ['instruction', 'constraints', 'answer', 'rejected', 'judge'],
      ['compatibility', 'verifier'],
    ],
  );
  assert.deepEqual(rolesOnEnvBaseUrl(config({ default: { model: 'vlm', baseUrls: ['http://a/v1'] }, judge: { model: 'vlm' } })), ['judge']);
});

test('each replica of an endpoint is checked: one outcome each, and one that refuses connections fails the pre-flight, named', async () => {
  const second = await startSimulator({ seed: 3 });
  try {
    const outcomes = await preflight(
      config({ default: { model: 'mmif-sim-vlm', baseUrls: [sim.url, second.url] } }),
      new LocalStore(path.join(dir, 'cache-replicas')),
      '_cache/llm',
    );
    assert.deepEqual(
      outcomes.map((o) => [o.endpoint, o.unreachable]),
      [
        [sim.url, undefined],
        [second.url, undefined],
      ],
    );
    assert.ok(second.stats().requests > 0, 'the second replica was asked');
  } finally {
    await second.close();
  }
  const port = await closedPort();
  const down = `http://127.0.0.1:${port}/v1`;
  await assert.rejects(
    preflight(config({ default: { model: 'mmif-sim-vlm', baseUrls: [sim.url, down] } }), new LocalStore(path.join(dir, 'cache-replicas-down')), '_cache/llm'),
    (err: unknown) => err instanceof EndpointError && err.message.includes(`model endpoint ${down} (model mmif-sim-vlm)`) && /connection refused/.test(err.message),
  );
});
