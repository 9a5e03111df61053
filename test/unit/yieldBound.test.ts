/** Sizing a round against the measured yield's uncertainty (domain/yieldBound.ts), checked by simulated builds. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normalCdf, normalQuantile, samplesForRecords } from '../../domain/yieldBound.js';

test('the normal quantile and distribution function agree with the published tables', () => {
  assert.ok(Math.abs(normalCdf(0) - 0.5) < 1e-7);
  assert.ok(Math.abs(normalCdf(1.959964) - 0.975) < 1e-6);
  assert.ok(Math.abs(normalQuantile(0.975) - 1.959964) < 1e-5);
  assert.ok(Math.abs(normalQuantile(0.95) - 1.644854) < 1e-5);
  assert.ok(Math.abs(normalQuantile(0.01) + 2.326348) < 1e-5);
  assert.throws(() => normalQuantile(1), /p must be in \(0, 1\)/);
});

test('samples for a deficit: above the point estimate by the yield uncertainty, never above twice it', () => {
  // 62 of 104 accepted (0.596): 21 more records are 36 samples at that yield; 99% sure takes 53.
  assert.equal(samplesForRecords(21, 104, 62, 0.99), 53);
  // The more samples measured, the closer the bound comes to the point estimate (464 / 0.6 = 774) plus
  // the new samples' own binomial spread (2.33 x 13.9 records at 99%: ~54 samples).
  const few = samplesForRecords(464, 232, 139, 0.99);
  const many = samplesForRecords(464, 23_210, 13_926, 0.99);
  assert.ok(few > many && many > 774 + 40 && many < 774 + 70, `${few} > ${many} > 774`);
  // 3 of 20 accepted: the yield is too uncertain for the bound; twice the point estimate (20 samples).
  assert.equal(samplesForRecords(3, 20, 3, 0.99), 40);
  assert.equal(samplesForRecords(0, 20, 3, 0.99), 0);
  assert.throws(() => samplesForRecords(3, 20, 0, 0.99), /0 accepted of 20 observed/);
});

/** A seeded generator (mulberry32), so the simulated builds below are the same on every run. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const binomial = (n: number, p: number, next: () => number) => {
  let k = 0;
  for (let i = 0; i < n; i++) if (next() < p) k++;
  return k;
};

test('a top-up round sized by the bound falls short about as rarely as asked; the old 10% margin fell short ten times as often', () => {
  // A source of the 1/4-scale paper build: 333 records owed at a true yield of 0.6; round 0 planned
  // 417 samples (expectedYield 0.8), all counted when the next round is planned. 3,000 simulated
  // builds, each round sized for 99% (a 5% risk over 5 sources).
  const next = random(24);
  const goal = 333;
  const [observed, p] = [417, 0.6];
  let short = 0;
  let oldShort = 0;
  let planned = 0;
  const trials = 3000;
  for (let trial = 0; trial < trials; trial++) {
    const accepted = binomial(observed, p, next);
    const more = samplesForRecords(goal - accepted, observed, accepted, 0.99);
    if (accepted + binomial(more, p, next) < goal) short++;
    planned += observed + more;
    // Before: the deficit's samples at the measured yield, 10% added.
    const oldMore = Math.max(0, Math.ceil((((goal - accepted) * observed) / accepted) * 1.1));
    if (accepted + binomial(oldMore, p, next) < goal) oldShort++;
  }
  assert.ok(short / trials <= 0.02, `fell short in ${short} of ${trials}`);
  // Seeded: 27 and 284 of 3,000.
  assert.ok(oldShort / trials >= 0.07 && oldShort >= 5 * short, `the old margin fell short in ${oldShort} of ${trials}, the bound in ${short}`);
  // The price: samples planned beyond the 555 the true yield needs on average (5.5%).
  const overhead = planned / trials / (goal / p);
  assert.ok(overhead < 1.12, `planned ${overhead.toFixed(3)}x the samples the true yield needs`);
});
