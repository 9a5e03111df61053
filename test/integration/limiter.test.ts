/**
 * Admission control: header parsing and the limiter on its own, then ModelCaller against the real
 * simulator over HTTP. Each HTTP test names its own model, so it gets its own worker-wide limiter.
 */
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { resolveEndpoint } from '../../llm/endpoint.js';
import { limiterFor } from '../../llm/limiter.js';
import { EndpointLimiter, type Ticket } from '../../llm/endpointLimiter.js';
import type { EndpointLimits } from '../../llm/endpointLimits.js';
import { ModelCaller } from '../../llm/modelCaller.js';
import { askedWaitMs, parseDuration, readRateLimitHeaders, retryAfterMs, type HeaderSource } from '../../llm/rateLimitHeaders.js';
import { renderAnswerPrompt } from '../../prompts/answerPrompt.js';
import { DEFAULT_FAULTS } from '../../simulator/faults.js';
import { formatDuration } from '../../simulator/rateLimits.js';
import { startSimulator, type SimulatorHandle } from '../../simulator/server.js';
import { defaultLlmSettings } from '../harness/llmSettings.js';
import { ManualClock, settled } from '../harness/manualClock.js';
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

/** `count` distinct answer calls at once through a fresh cache. */
async function burst(model: string, limits: EndpointLimits, count: number, label = model): Promise<void> {
  const caller = new ModelCaller(new LocalStore(path.join(dir, `${label}-${Math.random()}`)), '_cache/llm', llm, {
    limits: () => limits,
    retry: { baseDelayMs: 20 },
  });
  const replies = await Promise.all(
    Array.from({ length: count }, (_, i) => caller.text({ stage: 'answer', endpoint: endpoint(model), prompt: renderAnswerPrompt(`Describe scene ${label} ${i}.`, []) }, [])),
  );
  assert.equal(replies.length, count);
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
// The limiter alone, on a manual clock: time moves only when the test moves it.

/** A limiter on a manual clock, and `admit` to send a request whose attempt ends when told (`times`: when each was admitted). */
function clocked(limits: EndpointLimits, options: { workers?: number } = {}) {
  const clock = new ManualClock();
  const start = clock.now();
  const limiter = new EndpointLimiter(limits, { ...options, clock });
  const times: number[] = [];
  /** Runs one request of `tokens`; `finish` ends its attempt (with `outcome` told to its ticket first). */
  const admit = (tokens = 0) => {
    let finish!: (outcome?: (ticket: Ticket) => void) => void;
    const done = limiter.run(tokens, (ticket) => {
      times.push(clock.now() - start);
      return new Promise<void>((resolve) => (finish = (outcome) => (outcome?.(ticket), resolve())));
    });
    return { done, finish: (outcome?: (ticket: Ticket) => void) => finish(outcome) };
  };
  return { clock, limiter, times, admit };
}

const headers = (values: Record<string, string>): HeaderSource => new Headers(values);

test('FIFO: with one slot requests run in arrival order, and a retry keeps its place', async () => {
  const limiter = new EndpointLimiter({ concurrency: 1 });
  const order: string[] = [];
  const job = (name: string, place?: number) =>
    limiter.run(
      0,
      async () => {
        order.push(name);
        await settled();
      },
      place,
    );
  const first = limiter.place();
  const runs = [job('a', first), job('b'), job('c')];
  // A retry of `a` queued behind b and c still goes before them.
  runs.push(job('a-retry', first));
  await Promise.all(runs);
  assert.deepEqual(order, ['a', 'a-retry', 'b', 'c']);
});

test("the provider's remaining budget is honoured: exhausted, the next request waits for its refill", async () => {
  const { clock, limiter, times, admit } = clocked({ concurrency: 4 });
  // Limit 2 refilled in full over 600 ms: one request is back after 300 ms.
  const first = admit();
  await settled();
  first.finish((ticket) =>
    ticket.succeeded(headers({ 'x-ratelimit-limit-requests': '2', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '600ms' }), undefined),
  );
  await first.done;
  const second = admit();
  await clock.advance(299);
  assert.deepEqual(times, [0], 'still waiting 1 ms before the refill');
  await clock.advance(1);
  assert.deepEqual(times, [0, 300]);
  second.finish();
  await second.done;
  assert.equal(limiter.snapshot().requestsPerMinute, 2);
});

test('a token estimate over budget waits; the real usage corrects it', async () => {
  // 6,000 tokens a minute: 100 a second, the bucket holds one second's worth.
  const { clock, times, admit } = clocked({ concurrency: 4, tokensPerMinute: 6000 });
  const first = admit(100);
  await settled();
  first.finish((ticket) => ticket.succeeded(undefined, 10)); // 90 given back
  await first.done;
  const second = admit(100); // 90 available: waits 100 ms for the rest
  const third = admit(50); // then the bucket is empty: waits 500 ms more for 50
  await clock.advance(99);
  assert.deepEqual(times, [0]);
  await clock.advance(1);
  assert.deepEqual(times, [0, 100]);
  await clock.advance(499);
  assert.deepEqual(times, [0, 100]);
  await clock.advance(1);
  assert.deepEqual(times, [0, 100, 600]);
  second.finish();
  third.finish();
  await Promise.all([second.done, third.done]);
});

test("a requests-per-minute limit paces calls: one second's worth at once, then one per 1/rate", async () => {
  // 600 a minute = 10 a second, bursts of at most one second's worth (10).
  const { clock, times, admit } = clocked({ concurrency: 50, requestsPerMinute: 600 });
  const requests = Array.from({ length: 25 }, () => admit());
  for (const request of requests) void request.done.then(() => undefined);
  await clock.advance(1500);
  assert.deepEqual(times, [...Array<number>(10).fill(0), ...Array.from({ length: 15 }, (_, i) => (i + 1) * 100)]);
  for (const request of requests) request.finish();
  await Promise.all(requests.map((r) => r.done));
});

test('a limit announced in x-ratelimit headers paces the requests after it', async () => {
  const { clock, limiter, times, admit } = clocked({ concurrency: 50 });
  const first = admit();
  await settled();
  first.finish((ticket) => ticket.succeeded(headers({ 'x-ratelimit-limit-requests': '300' }), undefined));
  await first.done;
  assert.equal(limiter.snapshot().requestsPerMinute, 300);
  // 300 a minute = 5 a second: the bucket (5) starts full when the limit is learnt, then one every 200 ms.
  const requests = Array.from({ length: 8 }, () => admit());
  await clock.advance(600);
  assert.deepEqual(times, [0, 0, 0, 0, 0, 0, 200, 400, 600]);
  for (const request of requests) request.finish();
  await Promise.all(requests.map((r) => r.done));
});

test('a 429 pauses the endpoint for its Retry-After, else for a default that doubles per congestion event', async () => {
  const { clock, limiter, times, admit } = clocked({ concurrency: 4 });
  /** Sends one request once the pause is over, and tells its ticket `outcome`. */
  const send = async (outcome: (ticket: Ticket) => void) => {
    const request = admit();
    await clock.advance(limiter.snapshot().pausedForMs);
    request.finish(outcome);
    await request.done;
  };
  // No Retry-After: 1 s, then 2 s for the next congestion event without a success in between.
  await send((ticket) => ticket.rateLimited(undefined));
  assert.equal(limiter.snapshot().pausedForMs, 1000);
  const paused = admit();
  await clock.advance(999);
  assert.deepEqual(times, [0], 'not admitted while paused');
  await clock.advance(1);
  assert.deepEqual(times, [0, 1000]);
  paused.finish((ticket) => ticket.rateLimited(undefined));
  await paused.done;
  assert.equal(limiter.snapshot().pausedForMs, 2000);
  // A success resets the default.
  await send((ticket) => ticket.succeeded(undefined, undefined));
  await send((ticket) => ticket.rateLimited(undefined));
  assert.equal(limiter.snapshot().pausedForMs, 1000);
  // A Retry-After says how long.
  await send((ticket) => ticket.rateLimited(headers({ 'retry-after': '7' })));
  assert.equal(limiter.snapshot().pausedForMs, 7000);
  assert.deepEqual(times, [0, 1000, 3000, 3000, 4000]);
});

test('AIMD: the 429s of one burst halve the window once; a 429 after the halving halves it again; successes add 1/window', async () => {
  const { clock, limiter, admit } = clocked({ concurrency: 8 });
  const burst = Array.from({ length: 8 }, () => admit());
  await settled();
  assert.equal(limiter.snapshot().inFlight, 8);
  for (const request of burst) request.finish((ticket) => ticket.rateLimited(headers({ 'retry-after-ms': '10' })));
  await Promise.all(burst.map((r) => r.done));
  assert.equal(limiter.snapshot().window, 4, 'eight 429s admitted in one epoch halve it once');
  const later = admit();
  await clock.advance(10);
  later.finish((ticket) => ticket.rateLimited(headers({ 'retry-after-ms': '10' })));
  await later.done;
  assert.equal(limiter.snapshot().window, 2);
  const success = admit();
  await clock.advance(10);
  success.finish((ticket) => ticket.succeeded(undefined, undefined));
  await success.done;
  assert.equal(limiter.snapshot().window, 2.5);
});

// ---------------------------------------------------------------------------------------
// Against the simulator

test('a concurrency cap of C never has more than C requests in flight', async () => {
  sim.setFaults({ latencyMs: 60 });
  await burst('lim-cap', { concurrency: 3 }, 12);
  const stats = sim.stats();
  assert.equal(stats.maxInFlight, 3);
  assert.equal(stats.completed, 12);
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

test('a Retry-After or a reset beyond maxWaitMs pauses the endpoint no longer than the bound; askedWaitMs reads what was asked', async () => {
  const { clock, limiter, admit } = clocked({ concurrency: 4, maxWaitMs: 300_000 });
  const request = admit();
  await clock.advance(0);
  request.finish((ticket) => ticket.rateLimited(headers({ 'retry-after': '100000' })));
  await request.done;
  assert.equal(limiter.snapshot().pausedForMs, 300_000);
  // A budget reported spent until a reset a day away refills within the bound.
  const spent = admit();
  await clock.advance(300_000);
  spent.finish((ticket) =>
    ticket.succeeded(headers({ 'x-ratelimit-limit-requests': '10', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '24h0m0s' }), undefined),
  );
  await spent.done;
  const next = admit();
  await clock.advance(30_000);
  next.finish();
  await next.done;

  const now = Date.parse('2030-01-01T00:00:00Z');
  assert.equal(askedWaitMs(headers({ 'retry-after': '100000' }), now), 100_000_000);
  assert.equal(askedWaitMs(headers({ 'retry-after-ms': '1e8' }), now), 100_000_000);
  assert.equal(askedWaitMs(headers({ 'x-ratelimit-remaining-tokens': '0', 'x-ratelimit-reset-tokens': '27h46m40s' }), now), 100_000_000);
  assert.equal(askedWaitMs(headers({ 'x-ratelimit-remaining-tokens': '5', 'x-ratelimit-reset-tokens': '27h' }), now), undefined, 'a budget not spent asks no wait');
});

test('a 3,000,000 s Retry-After sets no timer beyond Node’s limit: no TimeoutOverflowWarning, and the wait is still kept', async () => {
  const warnings: Error[] = [];
  const onWarning = (w: Error) => warnings.push(w);
  process.on('warning', onWarning);
  try {
    // No bound given: the limiter waits what was asked, on the system clock, in timers Node can set.
    const limiter = new EndpointLimiter({ concurrency: 1 });
    await limiter.run(0, async (ticket) => ticket.rateLimited(headers({ 'retry-after': '3000000' })));
    const controller = new AbortController();
    const waiting = limiter.run(0, async () => 'admitted', undefined, undefined, controller.signal);
    // A warning is emitted on the next tick after the timer is set: let it come, if it would.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    assert.ok(limiter.snapshot().pausedForMs > 2 ** 31, 'the whole pause is kept');
    assert.equal(limiter.snapshot().queued, 1, 'the request still waits');
    controller.abort();
    await assert.rejects(waiting);
    assert.deepEqual(
      warnings.map((w) => w.name),
      [],
    );
  } finally {
    process.off('warning', onWarning);
  }
});

test('Retry-After is honoured: the endpoint pauses for it before the refused call is retried', async () => {
  sim.setFaults({ maxConcurrent: 1, retryAfterSeconds: 1, latencyMs: 300 });
  const caller = new ModelCaller(new LocalStore(path.join(dir, 'retry-after')), '_cache/llm', llm, { limits: () => ({ concurrency: 4 }) });
  const call = (i: number) => {
    const started = Date.now();
    return caller.text({ stage: 'answer', endpoint: endpoint('lim-retry-after'), prompt: renderAnswerPrompt(`Describe the pause ${i}.`, []) }, []).then(() => Date.now() - started);
  };
  // The pause's timing is asserted on a manual clock above; against a real server only its lower
  // bound is certain (a loaded machine only makes calls slower).
  const [, refused] = (await Promise.all([call(1), call(2)])).sort((a, b) => a - b);
  assert.ok(refused! >= 1000 + 300, `the refused call waited Retry-After, then its latency (${refused} ms)`);
  assert.equal(sim.stats().byStatus['429'], 1);
});

test("a caller's requests-per-minute limit reaches the endpoint's limiter", async () => {
  // 600 a minute = 10 a second, bursts of at most one second's worth (10).
  // The pacing itself is timed on a manual clock above; here: the caller's limits reach the endpoint's limiter.
  await burst('lim-rpm', { concurrency: 50, requestsPerMinute: 600 }, 3);
  assert.equal(limiterOf('lim-rpm').snapshot().requestsPerMinute, 600);
  assert.equal(sim.stats().completed, 3);
});

test("x-ratelimit headers teach the limiter the provider's limits, which then pace calls", async () => {
  sim.setFaults({ rateLimitRequests: 300, rateLimitTokens: 1_000_000 });
  await burst('lim-learn', { concurrency: 50 }, 1, 'lim-learn-first');
  const learned = limiterOf('lim-learn').snapshot();
  assert.equal(learned.requestsPerMinute, 300);
  assert.equal(learned.tokensPerMinute, 1_000_000);
  // How a learnt limit paces is timed on a manual clock above.
});

test('shared by N workers, a limiter admits 1/N of the concurrency and of the per-minute rates, and follows N as it changes', async () => {
  const limiter = new EndpointLimiter({ concurrency: 8, requestsPerMinute: 6_000 });
  limiter.share(2);
  assert.deepEqual((({ workers, concurrency, window, requestsPerMinute }) => ({ workers, concurrency, window, requestsPerMinute }))(limiter.snapshot()), {
    workers: 2,
    concurrency: 4,
    window: 4,
    requestsPerMinute: 3_000,
  });
  const releases: Array<() => void> = [];
  const calls = Array.from({ length: 8 }, () => limiter.run(1, () => new Promise<void>((done) => releases.push(done))));
  await settled();
  assert.equal(limiter.snapshot().inFlight, 4, 'half the cap in flight');
  limiter.share(1); // the other worker left: the whole cap at once, not by additive growth
  await settled();
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
  const clock = new ManualClock();
  const limiter = new EndpointLimiter({ concurrency: 8, requestsPerMinute: 6_000 }, { workers: 2, clock });
  let wanted = 0;
  limiter.leaseThrough(() => wanted++);
  const releases: Array<() => void> = [];
  const calls = Array.from({ length: 10 }, () => limiter.run(1, () => new Promise<void>((done) => releases.push(done))));
  await settled();
  assert.equal(limiter.snapshot().inFlight, 0, 'no lease yet');
  assert.ok(wanted > 0, 'requests waiting with no lease ask for one');
  assert.deepEqual(limiter.demand(), { cap: 8, inFlight: 0, queued: 10, holding: 0 });
  limiter.lease(7); // more than the 1/2 split: an idle worker lent its part
  await settled();
  assert.equal(limiter.snapshot().inFlight, 0, 'no rate lease yet');
  assert.deepEqual(limiter.rateDemands(), [{ kind: 'rpm', limit: 6_000, used: 0, waiting: true, holding: 0 }]);
  limiter.leaseRates({ rpm: 4_500 }); // more than the 1/2 split too; its pacing starts with an empty second
  await clock.advance(100); // 75 a second: the first at once, the other 6 within 80 ms
  assert.deepEqual((({ concurrency, leased, inFlight, requestsPerMinute }) => ({ concurrency, leased, inFlight, requestsPerMinute }))(limiter.snapshot()), {
    concurrency: 7,
    leased: true,
    inFlight: 7,
    requestsPerMinute: 4_500,
  });
  assert.deepEqual(limiter.rateDemands(), [{ kind: 'rpm', limit: 6_000, used: (7 * 60) / 5, waiting: false, holding: 4_500 }], 'its use: 7 in the last 5 s');
  limiter.lease(2); // lowered: requests already sent are not recalled, no new one is admitted
  releases.splice(0, 4).forEach((release) => release());
  await settled();
  assert.equal(limiter.snapshot().inFlight, 3);
  releases.shift()!();
  await settled();
  assert.equal(limiter.snapshot().inFlight, 2);
  limiter.lease(undefined); // the lease workflow is out of reach: the 1/2 split
  limiter.leaseRates(undefined);
  await clock.advance(100); // the 1/2 split of the rate (50 a second) paces the next admission
  assert.deepEqual(limiter.demand(), { cap: 8, inFlight: 4, queued: 1, holding: 4 });
  assert.equal(limiter.snapshot().leased, false);
  assert.equal(limiter.snapshot().requestsPerMinute, 3_000);
  while (releases.length) (releases.shift()!(), await clock.advance(100));
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
            await settled();
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
  await settled();
  const both = burstOf(8, { concurrency: 64 });
  await settled();
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
  await settled();
  assert.equal(limiter.snapshot().queued, 2);
  abort.abort(new Error('build cancelled'));
  await assert.rejects(aborted, /build cancelled/);
  assert.equal(limiter.snapshot().queued, 1, 'only the request behind is still waiting');
  release();
  await holding;
  assert.equal(await behind, 'behind ran');
});
