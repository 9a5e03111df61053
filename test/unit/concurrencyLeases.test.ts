/**
 * Concurrency leases (llm/concurrencyLeases.ts): fair shares by demand, and a simulated fleet of
 * workers whose reports and grants cross in flight, checked never to exceed the cap while keeping it
 * full whenever the workers together want it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fairShares, grantLeases, grantsMoved, rateDemand, SILENT_MS, type LeaseBook } from '../../llm/concurrencyLeases.js';
import { worthReporting } from '../../worker/endpointSharing.js';

test('fair shares: water-filling over demands, the rest spread evenly, summing to the cap', () => {
  assert.deepEqual(fairShares(128, [200, 0, 0, 0]), [128, 0, 0, 0]);
  assert.deepEqual(fairShares(128, [200, 10, 0, 300]), [59, 10, 0, 59]);
  assert.deepEqual(fairShares(128, [20, 10, 0, 30]), [37, 27, 17, 47]);
  assert.deepEqual(fairShares(128, [0, 0, 0, 0]), [32, 32, 32, 32]);
  assert.deepEqual(fairShares(10, [5, 5, 5]), [4, 3, 3]);
  assert.deepEqual(fairShares(0, [5]), [0]);
  for (const demands of [[1, 2, 3], [1000, 1, 0, 7], [0], [3, 3]])
    assert.equal(
      fairShares(97, demands).reduce((a, b) => a + b, 0),
      97,
    );
});

test('a busy worker borrows what idle workers do not use and gives it back when they want it', () => {
  const book: LeaseBook = {};
  const held: Record<string, number> = {};
  /** A worker's report with the grant it holds; the answer is applied at once. */
  const report = (worker: string, inFlight: number, queued: number) =>
    (held[worker] = grantLeases(book, { worker, seq: 0, endpoints: [{ endpoint: 'e', cap: 128, inFlight, queued, holding: held[worker] ?? 0 }] }, 0).grants.e!);
  const total = () => Object.values(held).reduce((a, b) => a + b, 0);
  // Four workers join idle: the first takes the unclaimed cap as headroom, the others get what is free.
  for (const w of ['a', 'b', 'c', 'd']) report(w, 0, 0);
  assert.deepEqual(held, { a: 128, b: 0, c: 0, d: 0 });
  // At their next reports the headroom is spread evenly.
  for (const w of ['a', 'b', 'c', 'd']) report(w, 0, 0);
  for (const w of ['a', 'b', 'c', 'd']) report(w, 0, 0);
  assert.deepEqual(held, { a: 32, b: 32, c: 32, d: 32 });
  // a gets busy: it borrows the idle workers' parts as they report, within two reports each (until
  // an idle worker reports again, it may still be admitting under the grant it had).
  assert.equal(report('a', 32, 500), 32);
  for (const w of ['b', 'c', 'd']) report(w, 0, 0);
  assert.deepEqual(held, { a: 32, b: 0, c: 0, d: 0 });
  assert.equal(report('a', 32, 500), 32, 'b, c and d may still hold 32 each');
  for (const w of ['b', 'c', 'd']) report(w, 0, 0);
  assert.equal(report('a', 32, 500), 128, 'the idle workers lend their part');
  assert.deepEqual(held, { a: 128, b: 0, c: 0, d: 0 });
  // b gets busy: nothing is free while a holds 128; a gives half back at its next report, but its
  // requests in flight still count until they end.
  assert.equal(report('b', 0, 300), 0);
  const bWaits = { worker: 'b', seq: 0, endpoints: [{ endpoint: 'e', cap: 128, inFlight: 0, queued: 300, holding: 0 }] };
  assert.equal(grantsMoved(book, bWaits), false, "b's answer would not change: the workflow holds it back");
  assert.equal(report('a', 128, 400), 64, 'a is entitled to half now');
  assert.equal(report('b', 0, 300), 0, 'a still has 128 in flight');
  report('a', 64, 400);
  assert.equal(grantsMoved(book, bWaits), true, "a gave half back: b's waiting answer goes out");
  assert.equal(report('b', 0, 300), 64, 'fair: half each');
  assert.ok(total() <= 128);
});

test('a released or silent worker returns its leases', () => {
  const book: LeaseBook = {};
  const ask = (worker: string, now: number) =>
    grantLeases(book, { worker, seq: 0, endpoints: [{ endpoint: 'e', cap: 100, inFlight: 0, queued: 1000, holding: 0 }] }, now).grants.e!;
  assert.equal(ask('a', 0), 100);
  assert.equal(grantLeases(book, { worker: 'a', seq: 0, endpoints: [{ endpoint: 'e', cap: 100, inFlight: 0, queued: 1000, holding: 100 }] }, 0).shared, undefined, 'alone');
  assert.equal(ask('b', 0), 0);
  assert.equal(grantLeases(book, { worker: 'a', seq: 0, endpoints: [{ endpoint: 'e', cap: 100, inFlight: 0, queued: 1000, holding: 100 }] }, 0).shared, true);
  grantLeases(book, { worker: 'a', seq: 0, endpoints: [], release: true }, 1);
  assert.equal(ask('b', 2), 100);
  assert.equal(ask('c', 3), 0);
  assert.equal(ask('c', 3 + SILENT_MS + 1), 100, 'b went silent: its lease returns');
  assert.deepEqual(Object.keys(book.e!), ['c']);
});

test('the tightest cap any worker names applies', () => {
  const book: LeaseBook = {};
  const a = grantLeases(book, { worker: 'a', seq: 0, endpoints: [{ endpoint: 'e', cap: 64, inFlight: 0, queued: 0, holding: 0 }] }, 0).grants.e!;
  assert.equal(a, 64);
  const ask = () => grantLeases(book, { worker: 'b', seq: 0, endpoints: [{ endpoint: 'e', cap: 128, inFlight: 0, queued: 1000, holding: 0 }] }, 0).grants.e!;
  assert.equal(ask(), 0, 'a holds all of the 64 as headroom');
  assert.equal(grantLeases(book, { worker: 'a', seq: 0, endpoints: [{ endpoint: 'e', cap: 64, inFlight: 0, queued: 0, holding: a }] }, 0).grants.e, 0);
  assert.equal(ask(), 0, 'a may hold 64 until its next report');
  grantLeases(book, { worker: 'a', seq: 0, endpoints: [{ endpoint: 'e', cap: 64, inFlight: 0, queued: 0, holding: 0 }] }, 0);
  assert.equal(ask(), 64, "b's own cap of 128 does not apply: a's 64 is tighter");
});

/**
 * A fleet of `workers` with demands changing at random; each step every worker admits up to the
 * grant it has (requests last `latency` steps) and a random half of them report; an answer is
 * applied after the worker's next admissions (it was on its way meanwhile). The endpoint never has more than the cap in flight, and is kept full
 * whenever the fleet wants it.
 */
function simulate(workers: number, seed: number): { overCap: number; used: number; wanted: number } {
  let state = seed;
  const random = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const CAP = 128;
  const latency = 4;
  const book: LeaseBook = {};
  const fleet = Array.from({ length: workers }, (_, i) => ({ id: `w${i}`, demand: 0, grant: 0, inbox: undefined as number | undefined, running: [] as number[] }));
  let overCap = 0;
  let used = 0;
  let wanted = 0;
  for (let step = 0; step < 4000; step++) {
    for (const w of fleet) {
      if (step % 50 === 0) w.demand = random() < 0.3 ? 0 : Math.floor(random() * 120);
      w.running = w.running.map((t) => t - 1).filter((t) => t > 0);
      // Still under the grant it held when it reported: the answer is on its way.
      const admit = Math.max(0, Math.min(w.demand, w.grant) - w.running.length);
      for (let i = 0; i < admit; i++) w.running.push(latency);
      if (w.inbox !== undefined) ((w.grant = w.inbox), (w.inbox = undefined));
    }
    const inFlight = fleet.reduce((n, w) => n + w.running.length, 0);
    if (inFlight > CAP) overCap++;
    if (step % 50 > 10) {
      used += inFlight;
      wanted += Math.min(
        CAP,
        fleet.reduce((n, w) => n + w.demand, 0),
      );
    }
    for (const w of fleet) {
      if (random() < 0.5) continue;
      const queued = Math.max(0, w.demand - w.running.length);
      w.inbox = grantLeases(book, { worker: w.id, seq: 0, endpoints: [{ endpoint: 'e', cap: CAP, inFlight: w.running.length, queued, holding: w.grant }] }, step).grants.e;
    }
  }
  return { overCap, used, wanted };
}

test('simulated fleets of 2 and 4 workers: never over the cap, and the cap kept full when wanted', () => {
  for (const workers of [2, 4]) {
    for (const seed of [1, 2, 3]) {
      const { overCap, used, wanted } = simulate(workers, seed);
      assert.equal(overCap, 0, `${workers} workers, seed ${seed}: over the cap in ${overCap} steps`);
      assert.ok(used / wanted >= 0.95, `${workers} workers, seed ${seed}: ${((100 * used) / wanted).toFixed(1)}% of what was wanted`);
    }
  }
});

/**
 * Per-minute rates leased the same way: `workers` whose request arrivals per step change at random;
 * each sends what its backlog holds up to the rate it paces at, and reports (rateDemand) as in
 * `simulate`. What the fleet sends per step never exceeds the limit, and reaches it whenever the
 * fleet wants it.
 */
function simulateRates(workers: number, seed: number): { overLimit: number; sent: number; wanted: number } {
  let state = seed;
  const random = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const LIMIT = 1_000;
  const book: LeaseBook = {};
  const fleet = Array.from({ length: workers }, (_, i) => ({ id: `w${i}`, arrivals: 0, backlog: 0, pace: 0, inbox: undefined as number | undefined }));
  let overLimit = 0;
  let sent = 0;
  let wanted = 0;
  for (let step = 0; step < 4000; step++) {
    let out = 0;
    const sends: number[] = [];
    for (const w of fleet) {
      if (step % 50 === 0) w.arrivals = random() < 0.3 ? 0 : Math.floor(random() * 600);
      w.backlog += w.arrivals;
      const send = Math.min(w.backlog, w.pace);
      w.backlog -= send;
      out += send;
      sends.push(send);
      if (w.inbox !== undefined) ((w.pace = w.inbox), (w.inbox = undefined));
    }
    if (out > LIMIT) overLimit++;
    if (step % 50 > 10) {
      sent += out;
      wanted += Math.min(
        LIMIT,
        fleet.reduce((n, w) => n + w.arrivals, 0),
      );
    }
    for (const [i, w] of fleet.entries()) {
      if (random() < 0.5) continue;
      const entry = rateDemand('e/rpm', { limit: LIMIT, used: sends[i]!, waiting: w.backlog > 0, holding: w.pace });
      w.inbox = grantLeases(book, { worker: w.id, seq: 0, endpoints: [entry] }, step).grants['e/rpm'];
    }
  }
  return { overLimit, sent, wanted };
}

test('per-minute rates by demand: simulated fleets of 2 and 4 workers never pace over the limit together and keep it used when wanted', () => {
  assert.deepEqual(
    rateDemand('e/rpm', { limit: 7_680, used: 1_000.4, waiting: true, holding: 1_920 }),
    { endpoint: 'e/rpm', cap: 7_680, inFlight: 1_920, queued: 5_760, holding: 1_920 },
    'waiting at its rate: wants the whole limit',
  );
  assert.deepEqual(
    rateDemand('e/rpm', { limit: 7_680, used: 300.2, waiting: false, holding: 1_920 }),
    { endpoint: 'e/rpm', cap: 7_680, inFlight: 301, queued: 0, holding: 1_920 },
    'otherwise: what it used',
  );
  for (const workers of [2, 4]) {
    for (const seed of [1, 2, 3]) {
      const { overLimit, sent, wanted } = simulateRates(workers, seed);
      assert.equal(overLimit, 0, `${workers} workers, seed ${seed}: over the limit in ${overLimit} steps`);
      assert.ok(sent / wanted >= 0.95, `${workers} workers, seed ${seed}: ${((100 * sent) / wanted).toFixed(1)}% of what was wanted`);
    }
  }
});

test('a worker reports at once when requests start waiting at its grant, a quarter of it falls idle, or requests above a lowered grant end', () => {
  const at = (inFlight: number, queued: number, holding: number) => ({ endpoint: 'e', cap: 128, inFlight, queued, holding });
  assert.equal(worthReporting(at(0, 1, 0), undefined), true, 'a first request waits for a lease');
  assert.equal(worthReporting(at(0, 0, 0), undefined), false);
  assert.equal(worthReporting(at(32, 10, 32), at(30, 0, 32)), true, 'wants more');
  assert.equal(worthReporting(at(32, 12, 32), at(32, 10, 32)), false, 'still wants more: told already');
  assert.equal(worthReporting(at(32, 2, 32), at(30, 0, 32)), false, 'two waiting at 32 are not worth an update');
  assert.equal(worthReporting(at(20, 0, 32), at(32, 5, 32)), true, 'spares 12 of 32');
  assert.equal(worthReporting(at(26, 0, 32), at(32, 5, 32)), false, 'spares 6 of 32');
  assert.equal(worthReporting(at(56, 40, 32), at(64, 40, 64)), true, 'grant lowered to 32: 8 of the 64 sent before have ended');
  assert.equal(worthReporting(at(62, 40, 32), at(64, 40, 64)), false);
});
