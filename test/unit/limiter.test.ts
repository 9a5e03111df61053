/**
 * Admission control: header parsing and the limiter on its own, then ModelCaller against the real
 * simulator over HTTP. Each HTTP test names its own model, so it gets its own worker-wide limiter.
 */
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { resolveEndpoint } from '../../llm/endpoint.js';
import { EndpointLimiter, limiterFor, type EndpointLimits } from '../../llm/limiter.js';
import { ModelCaller } from '../../llm/modelCaller.js';
import { parseDuration, readRateLimitHeaders, retryAfterMs } from '../../llm/rateLimitHeaders.js';
import { renderAnswerPrompt } from '../../prompts/answerPrompt.js';
import { DEFAULT_FAULTS } from '../../simulator/faults.js';
import { formatDuration } from '../../simulator/rateLimits.js';
import { startSimulator, type SimulatorHandle } from '../../simulator/server.js';
import { defaultLlmSettings } from '../harness/llmSettings.js';
import { LocalStore } from '../../storage/localStore.js';

let sim: SimulatorHandle;
let dir: string;
const llm = defaultLlmSettings();

before(async () => {
  sim = await startSimulator({ seed: 5 });
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-limiter-'));
});
after(async () => {
  await sim.close();
  await rm(dir, { recursive: true, force: true });
});
beforeEach(() => {
  sim.setFaults({ ...DEFAULT_FAULTS });
  sim.resetStats();
});

const endpoint = (model: string) => ({ model, baseUrl: sim.url, apiKeyEnv: 'MMIF_TEST_UNSET_KEY', concurrency: 16, batch: false });
const limiterOf = (model: string) => limiterFor(resolveEndpoint(endpoint(model)), { concurrency: 1_000 });

/** `count` distinct answer calls at once through a fresh cache; resolves to the elapsed milliseconds. */
async function burst(model: string, limits: EndpointLimits, count: number, label = model): Promise<number> {
  const caller = new ModelCaller(new LocalStore(path.join(dir, `${label}-${Math.random()}`)), '_cache/llm', llm, {
    limits: () => limits,
    retry: { baseDelayMs: 20 },
  });
  const started = Date.now();
  const replies = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      caller.text({ stage: 'answer', endpoint: endpoint(model), prompt: renderAnswerPrompt(`Describe scene ${label} ${i}.`, []) }, []),
    ),
  );
  assert.equal(replies.length, count);
  return Date.now() - started;
}

// ---------------------------------------------------------------------------------------
// Headers

test('rate-limit headers: Go durations, Retry-After forms, x-ratelimit budgets', () => {
  assert.equal(parseDuration('6m0s'), 360_000);
  assert.equal(parseDuration('1s'), 1000);
  assert.equal(parseDuration('20ms'), 20);
  assert.equal(parseDuration('1h2m3.5s'), 3_723_500);
  assert.equal(parseDuration('soon'), undefined);
  for (const ms of [20, 1500, 360_000, 3_723_500]) assert.equal(parseDuration(formatDuration(ms)), ms);

  const now = Date.parse('2030-01-01T00:00:00Z');
  assert.equal(retryAfterMs(new Headers({ 'retry-after': '3' }), now), 3000);
  assert.equal(retryAfterMs(new Headers({ 'retry-after': 'Tue, 01 Jan 2030 00:00:05 GMT' }), now), 5000);
  assert.equal(retryAfterMs(new Headers({ 'retry-after-ms': '250', 'retry-after': '3' }), now), 250);
  assert.equal(retryAfterMs(new Headers({ 'retry-after': 'later' }), now), undefined);
  assert.equal(retryAfterMs(undefined, now), undefined);

  assert.deepEqual(
    readRateLimitHeaders(
      new Headers({
        'x-ratelimit-limit-requests': '500',
        'x-ratelimit-remaining-requests': '499',
        'x-ratelimit-reset-requests': '120ms',
        'x-ratelimit-limit-tokens': '30000',
      }),
    ),
    { requests: { limit: 500, remaining: 499, resetMs: 120 }, tokens: { limit: 30000 } },
  );
});

// ---------------------------------------------------------------------------------------
// The limiter alone

test('FIFO: with one slot requests run in arrival order, and a retry keeps its place', async () => {
  const limiter = new EndpointLimiter({ concurrency: 1 });
  const order: string[] = [];
  const job = (name: string, place?: number) => limiter.run(0, async () => {
    order.push(name);
    await sleep(5);
  }, place);
  const first = limiter.place();
  const runs = [job('a', first), job('b'), job('c')];
  // A retry of `a` queued behind b and c still goes before them.
  runs.push(job('a-retry', first));
  await Promise.all(runs);
  assert.deepEqual(order, ['a', 'a-retry', 'b', 'c']);
});

test("the provider's remaining budget is honoured: exhausted, the next request waits for its refill", async () => {
  const limiter = new EndpointLimiter({ concurrency: 4 });
  // Limit 2 refilled in full over 600 ms: one request is back after 300 ms.
  const headers = new Headers({ 'x-ratelimit-limit-requests': '2', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '600ms' });
  await limiter.run(0, async (ticket) => ticket.succeeded(headers, undefined));
  const started = Date.now();
  await limiter.run(0, async () => undefined);
  const waited = Date.now() - started;
  assert.ok(waited >= 280 && waited < 800, `waited ${waited} ms`);
  assert.equal(limiter.snapshot().requestsPerMinute, 2);
});

test('a token estimate over budget waits; the real usage corrects it', async () => {
  // 6,000 tokens a minute: 100 a second, the bucket holds one second's worth.
  const limiter = new EndpointLimiter({ concurrency: 4, tokensPerMinute: 6000 });
  await limiter.run(100, async (ticket) => ticket.succeeded(undefined, 10)); // 90 given back
  const started = Date.now();
  await limiter.run(100, async () => undefined); // 90 available: waits ~100 ms for the rest
  await limiter.run(50, async () => undefined); // the bucket is empty: waits ~500 ms for 50
  const waited = Date.now() - started;
  assert.ok(waited >= 550 && waited < 1200, `waited ${waited} ms`);
});

// ---------------------------------------------------------------------------------------
// Against the simulator

test('a concurrency cap of C never has more than C requests in flight', async () => {
  sim.setFaults({ latencyMs: 60 });
  const elapsed = await burst('lim-cap', { concurrency: 3 }, 12);
  const stats = sim.stats();
  assert.equal(stats.maxInFlight, 3);
  assert.equal(stats.completed, 12);
  assert.ok(elapsed >= 4 * 60, `12 calls at 3 in flight take 4 rounds of latency, took ${elapsed} ms`);
});

test('AIMD: 429s from a server allowing fewer than the cap shrink the window; every call completes', async () => {
  sim.setFaults({ latencyMs: 40, maxConcurrent: 2, retryAfterSeconds: 0 });
  await burst('lim-aimd', { concurrency: 8 }, 16);
  const stats = sim.stats();
  assert.equal(stats.completed, 16);
  assert.ok((stats.byStatus['429'] ?? 0) > 0, 'the server refused some requests');
  assert.ok((stats.byStatus['429'] ?? 0) < 16, 'the window shrank instead of hammering the server');
  const window = limiterOf('lim-aimd').snapshot().window;
  assert.ok(window < 4, `window ${window} shrank from 8`);
});

test('Retry-After is honoured: the endpoint pauses for it before the refused call is retried', async () => {
  sim.setFaults({ maxConcurrent: 1, retryAfterSeconds: 1, latencyMs: 300 });
  const caller = new ModelCaller(new LocalStore(path.join(dir, 'retry-after')), '_cache/llm', llm, { limits: () => ({ concurrency: 4 }) });
  const call = (i: number) => {
    const started = Date.now();
    return caller
      .text({ stage: 'answer', endpoint: endpoint('lim-retry-after'), prompt: renderAnswerPrompt(`Describe the pause ${i}.`, []) }, [])
      .then(() => Date.now() - started);
  };
  const [admitted, refused] = (await Promise.all([call(1), call(2)])).sort((a, b) => a - b);
  assert.ok(admitted! < 900, `the admitted call is not held up (${admitted} ms)`);
  assert.ok(refused! >= 1000 + 300 && refused! < 2500, `the refused call waited Retry-After, then its latency (${refused} ms)`);
  assert.equal(sim.stats().byStatus['429'], 1);
});

test('a requests-per-minute limit paces calls', async () => {
  // 600 a minute = 10 a second, bursts of at most one second's worth (10).
  const elapsed = await burst('lim-rpm', { concurrency: 50, requestsPerMinute: 600 }, 25);
  assert.ok(elapsed >= 1400 && elapsed < 3500, `15 calls beyond the burst at 100 ms each, took ${elapsed} ms`);
  assert.equal(sim.stats().byStatus['429'], undefined);
});

test("x-ratelimit headers teach the limiter the provider's limits, which then pace calls", async () => {
  sim.setFaults({ rateLimitRequests: 300, rateLimitTokens: 1_000_000 });
  await burst('lim-learn', { concurrency: 50 }, 1, 'lim-learn-first');
  const learned = limiterOf('lim-learn').snapshot();
  assert.equal(learned.requestsPerMinute, 300);
  assert.equal(learned.tokensPerMinute, 1_000_000);
  // 300 a minute = 5 a second: 5 at once, then one every 200 ms.
  const elapsed = await burst('lim-learn', { concurrency: 50 }, 10, 'lim-learn-burst');
  assert.ok(elapsed >= 900 && elapsed < 2500, `paced by the learned limit, took ${elapsed} ms`);
  assert.equal(sim.stats().byStatus['429'], undefined, 'the server never had to refuse');
});

test('shared by N workers, a limiter admits 1/N of the concurrency and of the per-minute rates, and follows N as it changes', async () => {
  const limiter = new EndpointLimiter({ concurrency: 8, requestsPerMinute: 6_000 });
  limiter.share(2);
  assert.deepEqual(
    (({ workers, concurrency, window, requestsPerMinute }) => ({ workers, concurrency, window, requestsPerMinute }))(limiter.snapshot()),
    { workers: 2, concurrency: 4, window: 4, requestsPerMinute: 3_000 },
  );
  const releases: Array<() => void> = [];
  const calls = Array.from({ length: 8 }, () => limiter.run(1, () => new Promise<void>((done) => releases.push(done))));
  await sleep(20);
  assert.equal(limiter.snapshot().inFlight, 4, 'half the cap in flight');
  limiter.share(1); // the other worker left: the whole cap at once, not by additive growth
  await sleep(20);
  assert.equal(limiter.snapshot().inFlight, 8);
  limiter.share(4);
  assert.equal(limiter.snapshot().concurrency, 2);
  assert.equal(limiter.snapshot().requestsPerMinute, 1_500);
  for (const release of releases) release();
  await Promise.all(calls);

  // A limit the provider announces is shared too (its remaining-budget mirror is global and is not).
  const learning = new EndpointLimiter({ concurrency: 4 });
  learning.share(3);
  await learning.run(1, async (ticket) => ticket.succeeded({ get: (name: string) => ({ 'x-ratelimit-limit-requests': '900' })[name] ?? null }, undefined));
  assert.equal(learning.snapshot().requestsPerMinute, 300);
  assert.equal(learning.snapshot().concurrency, 1, 'never below 1');
});

test('leased: nothing is admitted before the first grant, the grant bounds the requests in flight whatever 1/N is, and an unleased limiter falls back to 1/N', async () => {
  const limiter = new EndpointLimiter({ concurrency: 8, requestsPerMinute: 6_000 }, 2);
  let wanted = 0;
  limiter.leaseThrough(() => wanted++);
  const releases: Array<() => void> = [];
  const calls = Array.from({ length: 10 }, () => limiter.run(1, () => new Promise<void>((done) => releases.push(done))));
  await sleep(20);
  assert.equal(limiter.snapshot().inFlight, 0, 'no lease yet');
  assert.ok(wanted > 0, 'requests waiting with no lease ask for one');
  assert.deepEqual(limiter.demand(), { cap: 8, inFlight: 0, queued: 10, holding: 0 });
  limiter.lease(7); // more than the 1/2 split: an idle worker lent its part
  await sleep(20);
  assert.equal(limiter.snapshot().inFlight, 0, 'no rate lease yet');
  assert.deepEqual(limiter.rateDemands(), [{ kind: 'rpm', limit: 6_000, used: 0, waiting: true, holding: 0 }]);
  limiter.leaseRates({ rpm: 4_500 }); // more than the 1/2 split too; its pacing starts with an empty second
  for (let i = 0; i < 40 && limiter.snapshot().inFlight < 7; i++) await sleep(10);
  assert.deepEqual(
    (({ concurrency, leased, inFlight, requestsPerMinute }) => ({ concurrency, leased, inFlight, requestsPerMinute }))(limiter.snapshot()),
    { concurrency: 7, leased: true, inFlight: 7, requestsPerMinute: 4_500 },
  );
  assert.deepEqual(limiter.rateDemands(), [{ kind: 'rpm', limit: 6_000, used: (7 * 60) / 5, waiting: false, holding: 4_500 }], 'its use: 7 in the last 5 s');
  limiter.lease(2); // lowered: requests already sent are not recalled, no new one is admitted
  releases.splice(0, 4).forEach((release) => release());
  await sleep(20);
  assert.equal(limiter.snapshot().inFlight, 3);
  releases.shift()!();
  await sleep(20);
  assert.equal(limiter.snapshot().inFlight, 2);
  limiter.lease(undefined); // the lease workflow is out of reach: the 1/2 split
  limiter.leaseRates(undefined);
  await sleep(20);
  assert.deepEqual(limiter.demand(), { cap: 8, inFlight: 4, queued: 1, holding: 4 });
  assert.equal(limiter.snapshot().leased, false);
  assert.equal(limiter.snapshot().requestsPerMinute, 3_000);
  while (releases.length) releases.shift()!(), await sleep(5);
  await Promise.all(calls);
});

test("one build's low cap stops applying once its requests are done: a later build asking for 64 gets 64", async () => {
  const resolved = resolveEndpoint(endpoint('cap-across-builds'));
  let inFlight = 0;
  let peak = 0;
  const burstOf = async (count: number, limits: EndpointLimits) => {
    peak = 0;
    const limiter = limiterFor(resolved, limits);
    await Promise.all(
      Array.from({ length: count }, () =>
        limiter.run(
          0,
          async () => {
            peak = Math.max(peak, ++inFlight);
            await sleep(20);
            inFlight--;
          },
          limiter.place(),
          limits,
        ),
      ),
    );
    return peak;
  };
  assert.equal(await burstOf(8, { concurrency: 2 }), 2, 'the first build is held to its cap of 2');
  assert.equal(await burstOf(16, { concurrency: 64 }), 16, 'the later build is not held to the earlier cap');
  assert.equal(limiterFor(resolved, { concurrency: 64 }).snapshot().concurrency, 64);

  // While both builds have requests in flight, the tightest applies to all of them.
  const limiter = limiterFor(resolved, { concurrency: 64 });
  let release!: () => void;
  const lowHeld = limiter.run(0, () => new Promise<void>((done) => (release = done)), limiter.place(), { concurrency: 2 });
  await sleep(5);
  const both = burstOf(8, { concurrency: 64 });
  await sleep(50);
  assert.equal(limiter.snapshot().concurrency, 2);
  assert.ok(limiter.snapshot().inFlight <= 2, JSON.stringify(limiter.snapshot()));
  release();
  await Promise.all([lowHeld, both]);
});

test('an aborted request leaves the line at once, and the ones behind it move up', async () => {
  const limiter = new EndpointLimiter({ concurrency: 1 });
  let release!: () => void;
  const holding = limiter.run(0, () => new Promise<void>((done) => (release = done)));
  const abort = new AbortController();
  const aborted = limiter.run(0, async () => 'ran', limiter.place(), { concurrency: 1 }, abort.signal);
  const behind = limiter.run(0, async () => 'behind ran');
  await sleep(10);
  assert.equal(limiter.snapshot().queued, 2);
  abort.abort(new Error('build cancelled'));
  await assert.rejects(aborted, /build cancelled/);
  assert.equal(limiter.snapshot().queued, 1, 'only the request behind is still waiting');
  release();
  await holding;
  assert.equal(await behind, 'behind ran');
});
