/**
 * Concurrency leases (llm/concurrencyLeases.ts): fair shares by demand, and a simulated fleet of
 * workers whose reports and grants cross in flight, checked never to exceed the cap while keeping it
 * full whenever the workers together want it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  fairShares,
  forgetSilent,
  grantLeases,
  grantsMoved,
  LEASE_MS,
  leaseEnds,
  rateDemand,
  type DemandReport,
  type EndpointDemand,
  type LeaseAnswer,
  type LeaseBook,
} from '../../llm/concurrencyLeases.js';
import { ManualClock } from '../harness/manualClock.js';
import { CHECK_MS, givingBack, jittered, MIN_GAP_MS, REPORT_DEADLINE_MS, SPARE_SETTLE_MS, spares, worthReporting } from '../../worker/endpointSharing.js';
import { againMs, HOLD_MS, MAX_HELD, refuseStale } from '../../workflows/endpointLeases.js';

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
  // Four workers join idle: the first takes the cap nobody holds as headroom, the others get what is free.
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

test('a released worker, or one whose term has passed, returns its leases', () => {
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
  assert.equal(ask('c', 2 + LEASE_MS + 1), 100, "b's term passed unrenewed: its lease returns");
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
    { endpoint: 'e/rpm', cap: 7_680, inFlight: 1_920, queued: 5_760, holding: 1_920, perMinute: true },
    'waiting at its rate: wants the whole limit',
  );
  assert.deepEqual(
    rateDemand('e/rpm', { limit: 7_680, used: 300.2, waiting: false, holding: 1_920 }),
    { endpoint: 'e/rpm', cap: 7_680, inFlight: 301, queued: 0, holding: 1_920, perMinute: true },
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

test('a worker reports at once when requests start waiting at its grant, a quarter of it falls idle, or what the desk counts for it exceeds what it may hold by a step', () => {
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
  assert.equal(worthReporting(at(0, 0, 4), at(0, 0, 12)), true, 'idle, grant lowered from 12 to 4: the desk still counts 12 until told');
  assert.equal(worthReporting(at(0, 0, 11), at(0, 0, 12)), false, 'lowered by less than a step');
  assert.equal(worthReporting(at(0, 0, 0), at(3, 0, 8)), true, 'a term ended: the desk still counts 8');
});

test('while other workers want more, a worker reports each eighth of its grant it stops using (at least one slot), and gives it back before the desk hears of it', () => {
  const at = (inFlight: number, queued: number, holding: number) => ({ endpoint: 'e', cap: 128, inFlight, queued, holding });
  assert.equal(worthReporting(at(7, 0, 8), at(8, 0, 8), true), true, 'one of 8 slots unused, others want it');
  assert.equal(worthReporting(at(7, 0, 8), at(8, 0, 8)), false, 'nobody wants it: a quarter, at least two');
  assert.equal(worthReporting(at(10, 5, 10), at(11, 5, 11), true), true, 'grant lowered to 10: the one request above it ended');
  assert.equal(worthReporting(at(10, 5, 10), at(11, 5, 11)), false, 'nobody waits for that one slot');
  assert.equal(worthReporting(at(60, 0, 64), at(64, 0, 64), true), false, 'an eighth of 64 is 8');
  assert.equal(worthReporting(at(56, 0, 64), at(64, 0, 64), true), true);

  const e = at(3, 1, 8);
  assert.deepEqual(givingBack([e], new Set(['e'])), [{ ...e, holding: 4 }], 'reported holding what it uses: the desk frees the other 4 with this report');
  assert.deepEqual(givingBack([e], new Set()), [e], 'nobody wants them: kept as headroom');
  assert.deepEqual(givingBack([at(7, 0, 8)], new Set(['e'])), [at(7, 0, 7)]);
  assert.deepEqual(givingBack([at(8, 4, 8)], new Set(['e'])), [at(8, 4, 8)], 'all in use');
  const rate = rateDemand('e/rpm', { limit: 1_000, used: 10, waiting: false, holding: 500 });
  assert.deepEqual(givingBack([rate], new Set(['e/rpm'])), [rate], 'a per-minute pace is not given back early');

  // At the desk: b waits while a holds 8 with 3 in flight. Reported as it was, a's 8 stay counted
  // until its next report; given back, 4 of them go to b with the same report.
  for (const give of [false, true]) {
    const book: LeaseBook = {};
    const report = (worker: string, d: ReturnType<typeof at>) => grantLeases(book, { worker, seq: 0, endpoints: [d] }, 0);
    assert.equal(report('a', at(0, 8, 0)).grants.e, 128);
    assert.equal(report('b', at(0, 200, 0)).grants.e, 0);
    assert.equal(report('a', at(8, 0, 128)).grants.e, 8, 'a uses 8');
    assert.deepEqual(report('a', at(8, 0, 8)).wanted, ['e'], 'b asks for more than it holds: a is told so');
    const answer = report('b', at(0, 200, 0));
    assert.deepEqual([answer.grants.e, answer.wanted], [120, undefined], 'a asks for no more than it holds');
    const a = give ? givingBack([at(3, 1, 8)], new Set(['e']))[0]! : at(3, 1, 8);
    report('a', a);
    assert.equal(report('b', at(120, 80, 120)).grants.e, give ? 124 : 120, give ? "a's 4 unused slots go to b at once" : 'a may still hold 8');
  }
});

test('the desk tells a worker it is owed capacity when its fair share exceeds its grant by a step', () => {
  const book: LeaseBook = {};
  const report = (worker: string, inFlight: number, queued: number, holding: number) =>
    grantLeases(book, { worker, seq: 0, endpoints: [{ endpoint: 'e', cap: 16, inFlight, queued, holding }] }, 0);
  report('a', 0, 100, 0);
  report('a', 16, 84, 16);
  const b = report('b', 0, 100, 0);
  assert.deepEqual([b.grants.e, b.owed, b.wanted], [0, true, ['e']], 'fair share 8, a holds all 16');
  assert.equal(report('a', 16, 84, 16).grants.e, 8);
  assert.equal(report('a', 9, 91, 8).owed, undefined, 'a holds its fair share');
  const later = report('b', 0, 100, 0);
  assert.deepEqual([later.grants.e, later.owed], [7, undefined], 'one slot short (a still has 9 in flight) is not owed: within a step');
});

interface FleetOptions {
  seed: number;
  /** A paused desk: reports reaching it in [from, to) wait until `to`. */
  pause?: { from: number; to: number };
  /** Workers that die (stop reporting and admitting; their requests in flight run to their end) at these times. */
  deaths?: Record<number, number>;
  /** Workers give back unused slots as they report, where the last answer said others want more (givingBack). */
  giveBack?: boolean;
}

/**
 * Lease terms on a manual clock (test/harness/manualClock.ts): 8 workers whose demands change at
 * random; a report reaches the desk within 1 s, or one time in five 5-12 s late (a saturated host),
 * and one in twenty never does; its answer takes as long again. A worker keeps one report out (a new
 * one after REPORT_DEADLINE_MS unanswered), admits only under a grant whose term has not passed (leaseEnds from the send),
 * and its requests last 0.5-3 s (its drainMs is 3 s). Returns the most requests ever in flight
 * together, and what the fleet used against what it wanted.
 */
async function termsFleet(o: FleetOptions): Promise<{ maxInFlight: number; used: number; wanted: number; inFlightAt: (t: number) => number }> {
  const clock = new ManualClock(0);
  let state = o.seed;
  const random = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const CAP = 64;
  const STEP = 100;
  const END = 240_000;
  const book: LeaseBook = {};
  const newest: Record<string, number> = {};
  const fleet = Array.from({ length: 8 }, (_, i) => ({
    id: `w${i}`,
    demand: 0,
    grant: 0,
    leaseUntil: 0,
    seq: 0,
    out: 0,
    sentAt: 0,
    running: [] as number[],
    alive: true,
    wanted: new Set<string>(),
  }));
  const lag = () => (random() < 0.2 ? 5_000 + random() * 7_000 : random() * 1_000);
  const holdsNow = (w: (typeof fleet)[number], now: number) => (now < w.leaseUntil ? w.grant : 0);
  const send = (w: (typeof fleet)[number], now: number) => {
    const seq = (w.out = ++w.seq);
    w.sentAt = now;
    const inFlight = w.running.length;
    let endpoints: EndpointDemand[] = [{ endpoint: 'e', cap: CAP, inFlight, queued: Math.max(0, w.demand - inFlight), holding: holdsNow(w, now), drainMs: 3_000 }];
    if (o.giveBack) {
      endpoints = givingBack(endpoints, w.wanted);
      if (now < w.leaseUntil) w.grant = endpoints[0]!.holding; // admits within what it reports holding from now on
    }
    const report = { worker: w.id, seq, endpoints };
    if (random() < 0.05) return; // lost on the way
    let arrives = now + lag();
    if (o.pause && arrives >= o.pause.from && arrives < o.pause.to) arrives = o.pause.to;
    clock.setTimer(() => {
      if ((newest[w.id] ?? -1) >= seq) return;
      newest[w.id] = seq;
      const answer = grantLeases(book, report, clock.now());
      clock.setTimer(() => {
        if (!w.alive || w.out !== seq) return; // given up, or superseded by a newer report
        w.out = 0;
        w.grant = answer.grants.e!;
        w.leaseUntil = leaseEnds(w.sentAt, answer);
        w.wanted = new Set(answer.wanted);
      }, lag());
    }, arrives - now);
  };
  let maxInFlight = 0;
  let used = 0;
  let wanted = 0;
  const history: number[] = [];
  for (let now = 0; now < END; now += STEP) {
    for (const w of fleet) {
      if (o.deaths?.[fleet.indexOf(w)] === now) w.alive = false;
      w.running = w.running.filter((end) => end > now);
      if (!w.alive) continue;
      if (now % 10_000 === 0) w.demand = random() < 0.3 ? 0 : Math.floor(random() * 40);
      const admit = Math.max(0, Math.min(w.demand, holdsNow(w, now)) - w.running.length);
      for (let i = 0; i < admit; i++) w.running.push(now + 500 + random() * 2_500);
      if (w.out === 0 || now - w.sentAt >= REPORT_DEADLINE_MS) send(w, now);
    }
    const inFlight = fleet.reduce((n, w) => n + w.running.length, 0);
    history.push(inFlight);
    maxInFlight = Math.max(maxInFlight, inFlight);
    used += inFlight;
    wanted += Math.min(
      CAP,
      fleet.reduce((n, w) => n + (w.alive ? w.demand : 0), 0),
    );
    await clock.advance(STEP);
  }
  return { maxInFlight, used, wanted, inFlightAt: (t) => history[Math.floor(t / STEP)]! };
}

test('lease terms: with late and lost reports and answers, a desk paused longer than a term, and workers dying with requests in flight, the fleet never has more than the cap in flight', async () => {
  for (const giveBack of [false, true]) {
    for (const seed of [1, 2, 3, 4]) {
      const { maxInFlight, used, wanted } = await termsFleet({ seed, deaths: { 2: 50_000, 5: 130_000 }, giveBack });
      assert.ok(maxInFlight <= 64, `seed ${seed}${giveBack ? ', giving back' : ''}: ${maxInFlight} in flight, over the cap of 64`);
      assert.ok(used / wanted >= 0.4, `seed ${seed}: ${((100 * used) / wanted).toFixed(1)}% of what was wanted, with answers up to 24 s late`);
    }
  }
  const pause = { from: 100_000, to: 160_000 };
  const paused = await termsFleet({ seed: 5, pause });
  assert.ok(paused.maxInFlight <= 64, `${paused.maxInFlight} in flight with the desk paused, over the cap`);
  assert.ok(paused.inFlightAt(pause.from + 15_000) > 0, 'within their terms, the workers keep admitting while the desk is paused');
  assert.equal(paused.inFlightAt(pause.to - 1_000), 0, 'past their terms (and the drain), they admit nothing');
});

test('lease terms: a worker is counted through its term and drain, then forgotten', () => {
  const book: LeaseBook = {};
  const at = (worker: string, now: number, queued: number) =>
    grantLeases(book, { worker, seq: 0, endpoints: [{ endpoint: 'e', cap: 64, inFlight: 0, queued, holding: 0, drainMs: 5_000 }] }, now);
  assert.equal(at('a', 0, 1000).termMs, LEASE_MS);
  assert.equal(at('b', 1, 1000).grants.e, 0, 'a holds the whole cap');
  forgetSilent(book, LEASE_MS + 5_000);
  assert.deepEqual(Object.keys(book.e!), ['a', 'b'], "a's term and drain have not passed");
  forgetSilent(book, LEASE_MS + 5_001);
  assert.deepEqual(Object.keys(book.e!), ['b']);
  assert.equal(at('b', LEASE_MS + 5_002, 1000).grants.e, 64, "a's slots go to b once a is forgotten");
});

/**
 * The fleet of bench/leaseFleet.ts on a manual clock: 16 workers with 16 request lanes each on a cap
 * of 128 (requests of 1 s), in busy spells of 5-15 s with idle gaps of 1-3 s, so the fleet always
 * wants more than the cap. The desk answers as workflows/endpointLeases.ts does: an unchanged answer
 * is held (at most MAX_HELD, until the grant moves or HOLD_MS), the others answered at once with
 * `again`; an owed worker takes the place of an unowed held one, and the workers give back as
 * worker/endpointSharing.ts does.
 * An update takes 30 ms each way. Returns the share of the cap in flight after the first 20 s, and
 * the most requests ever in flight together.
 */
function spellsFleet(seed: number): { used: number; maxInFlight: number } {
  let state = seed;
  const random = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const CAP = 128;
  const WORKERS = 16;
  const LANES = (2 * CAP) / WORKERS;
  const LAG = 30;
  const STEP = 10;
  const book: LeaseBook = {};
  const newest: Record<string, number> = {};
  const timers: Array<{ at: number; run: () => void }> = [];
  let now = 0;
  const after = (ms: number, run: () => void) => timers.push({ at: now + ms, run });
  const fleet = Array.from({ length: WORKERS }, (_, i) => ({
    id: `w${i}`,
    grant: 0,
    running: [] as number[],
    busyUntil: 0,
    idleUntil: 0,
    seq: 0,
    out: 0,
    reported: undefined as EndpointDemand | undefined,
    reportedAt: -Infinity,
    againAt: 0,
    shared: true,
    wanted: new Set<string>(),
    spareSince: undefined as number | undefined,
  }));
  type Worker = (typeof fleet)[number];
  const held: Array<{ worker: Worker; report: DemandReport; since: number; owed: boolean }> = [];
  const answer = (w: Worker, seq: number, a: LeaseAnswer) =>
    after(LAG, () => {
      if (w.out !== seq) return;
      w.out = 0;
      if (a.superseded) return;
      w.grant = a.grants.e!;
      w.shared = a.shared === true;
      w.wanted = new Set(a.wanted);
      w.againAt = a.again === undefined ? 0 : now + jittered(a.again);
    });
  const release = (h: (typeof held)[number], extra: Partial<LeaseAnswer> = {}) => {
    held.splice(held.indexOf(h), 1);
    answer(h.worker, h.report.seq, { ...grantLeases(book, h.report, now), ...extra });
  };
  const desk = (w: Worker, report: DemandReport) => {
    for (const h of held.filter((h) => h.worker === w)) (held.splice(held.indexOf(h), 1), answer(w, h.report.seq, { grants: {}, superseded: true, termMs: 0 }));
    newest[w.id] = report.seq;
    const a = grantLeases(book, report, now);
    if (a.grants.e !== report.endpoints[0]!.holding) return answer(w, report.seq, a);
    const evicted = held.length >= MAX_HELD && a.owed ? held.find((h) => !h.owed) : undefined;
    if (held.length >= MAX_HELD && !evicted) return answer(w, report.seq, { ...a, again: againMs(book) });
    if (evicted) release(evicted, { again: againMs(book) });
    held.push({ worker: w, report, since: now, owed: a.owed === true });
  };
  let used = 0;
  let samples = 0;
  let maxInFlight = 0;
  for (; now < 120_000; now += STEP) {
    timers.sort((a, b) => a.at - b.at);
    while (timers.length > 0 && timers[0]!.at <= now) timers.shift()!.run();
    for (const h of [...held]) if (grantsMoved(book, h.report) || now - h.since >= HOLD_MS) release(h);
    for (const w of fleet) {
      if (now >= w.idleUntil) {
        w.busyUntil = now + 5_000 + random() * 10_000;
        w.idleUntil = w.busyUntil + 1_000 + random() * 2_000;
      }
      w.running = w.running.filter((end) => end > now);
      const busy = now < w.busyUntil;
      while (busy && w.running.length < Math.min(LANES, w.grant)) w.running.push(now + 1_000);
      if (now % CHECK_MS !== 0) continue;
      const e: EndpointDemand = { endpoint: 'e', cap: CAP, inFlight: w.running.length, queued: busy ? LANES - w.running.length : 0, holding: w.grant, drainMs: 120_000 };
      if (!w.wanted.has('e') || !spares(e, true)) w.spareSince = undefined;
      else w.spareSince ??= now;
      const giving = w.spareSince !== undefined && now - w.spareSince >= SPARE_SETTLE_MS;
      const early = now - w.reportedAt >= MIN_GAP_MS && (w.shared || w.grant === 0) && worthReporting(e, w.reported, w.wanted.has('e') && (giving || w.spareSince === undefined));
      if (w.out === 0 ? now < w.againAt && !early : !early) continue;
      const sent = givingBack([e], new Set(giving ? ['e'] : []))[0]!;
      w.grant = sent.holding;
      w.reported = sent;
      w.reportedAt = now;
      const report: DemandReport = { worker: w.id, seq: (w.out = ++w.seq), endpoints: [sent] };
      after(LAG, () => desk(w, report));
    }
    const inFlight = fleet.reduce((n, w) => n + w.running.length, 0);
    maxInFlight = Math.max(maxInFlight, inFlight);
    if (now >= 20_000) ((used += inFlight / CAP), samples++);
  }
  return { used: used / samples, maxInFlight };
}

test('the bench fleet of 16 on a manual clock: giving back and owed first keep >= 95% of the cap in flight, never over it', () => {
  for (const seed of [1, 2]) {
    const { used, maxInFlight } = spellsFleet(seed);
    assert.ok(maxInFlight <= 128, `seed ${seed}: ${maxInFlight} in flight, over the cap`);
    assert.ok(used >= 0.95, `seed ${seed}: ${(100 * used).toFixed(1)}% of the cap in flight`);
  }
});

test("the desk's validator refuses a report no newer than the worker's newest, and lets a newer one or a new worker's through", () => {
  const newest = { a: 5 };
  const report = (worker: string, seq: number): DemandReport => ({ worker, seq, endpoints: [] });
  assert.throws(() => refuseStale(newest, report('a', 5)), /^Error: stale report: worker a sent seq 5, the desk holds 5$/);
  assert.throws(() => refuseStale(newest, report('a', 4)), /stale report/);
  assert.doesNotThrow(() => refuseStale(newest, report('a', 6)));
  assert.doesNotThrow(() => refuseStale(newest, report('b', 0)));
});
