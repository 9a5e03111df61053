// Where an endpoint's shared limit went unused: reads the per-second limiter states that
// bench/benchWorker.ts traces (`npx tsx bench/throughput.ts --only four --trace /tmp/t`) and, over
// the middle 80% of the busy seconds, splits the shortfall below the endpoint's cap into the unused
// share of workers that had nothing queued, and counts the worker-seconds spent held at a share
// with requests waiting; the workers' event-loop delay (a request holds its slot while its worker's
// loop is late); how many concurrency lease reports the workers sent; and where the sampled
// requests' slot time went (median and 90th percentile per step, from admission to release).
//
// Run:   npx tsx bench/shareTrace.ts /tmp/t.four.*.jsonl [--cap 128]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { LimiterSnapshot } from '../llm/endpointLimiter.js';
import type { SlotTimes } from '../llm/attemptSlot.js';
import { quantile } from './harness.js';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { cap: { type: 'string', default: '128' } } });
const CAP = Number(values.cap);
type Second = LimiterSnapshot & { loopMeanMs: number };
const bySecond = new Map<number, Second[]>();
/** Per worker: the count of lease reports sent so far, per second. */
const reports = new Map<number, Array<{ t: number; n: number }>>();
/** Sampled slots, with the second they were released in. */
const slots: Array<SlotTimes & { second: number }> = [];
for (const [worker, file] of positionals.entries()) {
  for (const line of readFileSync(file, 'utf8').split('\n').filter(Boolean)) {
    const entry = JSON.parse(line) as { t: number; limiters?: LimiterSnapshot[]; leaseReports?: number; loopMeanMs?: number; slots?: SlotTimes[] };
    for (const slot of entry.slots ?? []) slots.push({ ...slot, second: Math.round(entry.t / 1000) });
    if (entry.leaseReports !== undefined) reports.set(worker, [...(reports.get(worker) ?? []), { t: entry.t, n: entry.leaseReports }]);
    if (!entry.limiters?.length) continue;
    // The busiest limiter: the benchmark's one endpoint.
    const limiter = entry.limiters.reduce((a, b) => (a.inFlight + a.queued >= b.inFlight + b.queued ? a : b));
    const states = bySecond.get(Math.round(entry.t / 1000)) ?? [];
    states[worker] = { ...limiter, loopMeanMs: entry.loopMeanMs ?? 0 };
    bySecond.set(Math.round(entry.t / 1000), states);
  }
}
const busySeconds = [...bySecond.entries()]
  .filter(([, states]) => states.filter(Boolean).length === positionals.length)
  .sort(([a], [b]) => a - b)
  .filter(([, states]) => states.some((s) => s.inFlight > 0));
const steadySeconds = busySeconds.slice(Math.floor(busySeconds.length / 10), busySeconds.length - Math.floor(busySeconds.length / 10));
const steady = steadySeconds.map(([, states]) => states);
let shortfall = 0;
let idleShare = 0;
let heldWithQueue = 0;
for (const states of steady) {
  shortfall += CAP - states.reduce((n, s) => n + s.inFlight, 0);
  idleShare += states.filter((s) => s.queued === 0).reduce((n, s) => n + Math.max(0, s.concurrency - s.inFlight), 0);
  heldWithQueue += states.filter((s) => s.queued > 0 && s.inFlight >= s.concurrency).length;
}
const mean = (n: number) => (n / steady.length).toFixed(1);
const shares = steady.flat().map((s) => s.concurrency);
const kind = steady.flat().some((s) => s.leased) ? 'leased by demand' : `split 1/${steady[0]?.[0]?.workers}`;
console.log(`${positionals.length} workers, ${steady.length} steady seconds, shares of ${CAP} ${kind}: ${Math.min(...shares)}-${Math.max(...shares)}`);
console.log(
  `mean in flight ${mean(CAP * steady.length - shortfall)} of ${CAP}; shortfall ${mean(shortfall)}, of which unused share of workers with nothing queued ${mean(idleShare)}`,
);
console.log(`worker-seconds held at their share with requests queued: ${heldWithQueue} of ${steady.length * positionals.length}`);
const loopDelay = positionals.map((_, w) => steady.reduce((n, states) => n + states[w]!.loopMeanMs, 0) / steady.length);
console.log(`event-loop delay, mean per worker: ${loopDelay.map((ms) => ms.toFixed(1)).join(' + ')} ms`);
const sent = [...reports.values()].map((r) => ({ n: r.at(-1)!.n - r[0]!.n, s: (r.at(-1)!.t - r[0]!.t) / 1000 }));
if (sent.length > 0) console.log(`lease reports: ${sent.reduce((a, r) => a + r.n, 0)}, ${sent.map((r) => (r.n / Math.max(1, r.s)).toFixed(1)).join(' + ')} per second (whole run)`);

// Slot steps, over the requests released in the steady seconds: each step's time is the difference
// between consecutive stamps (a step missing in a slot, e.g. no sent mark, merges into the next).
const STEPS = ['marked', 'fetch', 'written', 'simulator-arrived', 'simulator-counted', 'simulator-answered', 'headers', 'body', 'released'] as const;
const inSteady = new Set(steadySeconds.map(([second]) => second));
const sampled = slots.filter((s) => inSteady.has(s.second) && s.released !== undefined);
if (sampled.length > 0) {
  const parts = STEPS.map((step, i) => {
    const values = sampled
      .filter((s) => s[step] !== undefined)
      .map(
        (s) =>
          s[step]! -
          (STEPS.slice(0, i)
            .reverse()
            .map((p) => s[p])
            .find((v) => v !== undefined) ?? 0),
      );
    const mean = values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
    return `${step} ${mean.toFixed(1)} (p50 ${quantile(values, 0.5).toFixed(1)}, p90 ${quantile(values, 0.9).toFixed(1)}, n ${values.length})`;
  });
  console.log(`slot time, ms from the previous step, mean (p50, p90) over ${sampled.length} sampled requests: ${parts.join('; ')}`);
}
