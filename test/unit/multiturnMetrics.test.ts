/**
 * Seed 002's metric definitions, computed by hand on a small fixture and checked against the tool.
 * The expected numbers below were worked out on paper from eqs. (1)-(4) and §5.1, not by calling the
 * functions under test.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { corpusPif, corpusPifNK, pif, pifNK, pifPerTurn, type TurnPif } from '../../domain/multiturn/metrics.js';

// Two chats. Each entry is one turn's verdicts on every instruction given so far (eq. 1 counts the
// earlier turns' instructions too). Chat B gives its first instruction at turn 2.
const chats: Record<string, boolean[][]> = {
  A: [[true], [true, false], [true, true, false]], // PIF 1, 1/2, 2/3
  B: [[], [false], [true, true]], // PIF undefined, 0, 1
};

function scored(): TurnPif[] {
  return Object.entries(chats).flatMap(([chatId, turns]) =>
    turns.flatMap((verdicts, i) => {
      const p = pif(verdicts);
      return p === undefined ? [] : [{ chatId, turn: i + 1, pif: p }];
    }),
  );
}

const close = (actual: number, expected: number, what: string) => assert.ok(Math.abs(actual - expected) < 5e-4, `${what}: ${actual} vs ${expected}`);

test('PIF of one response: instructions followed / instructions given so far; none given has no PIF', () => {
  assert.equal(pif([true, true, false]), 2 / 3);
  assert.equal(pif([false]), 0);
  assert.equal(pif([]), undefined);
});

test('corpus PIF is the mean over scored turns (the 0/0 turn is left out)', () => {
  const s = scored();
  assert.equal(s.length, 5);
  // (1 + 0.5 + 0.6667 + 0 + 1) / 5 = 3.1667 / 5
  close(corpusPif(s)!, 0.63333, 'corpus PIF');
  assert.equal(corpusPif([]), undefined);
});

test('PIF per turn with 95% Bernoulli intervals, clipped to [0, 1]', () => {
  const [t1, t2, t3] = pifPerTurn(scored());
  // turn 1: only chat A (B has no instruction yet): p = 1, p(1-p) = 0, so the interval is [1, 1]
  assert.deepEqual({ turn: t1!.turn, n: t1!.n, pif: t1!.pif, low: t1!.low, high: t1!.high }, { turn: 1, n: 1, pif: 1, low: 1, high: 1 });
  // turn 2: (0.5 + 0) / 2 = 0.25; 1.96 * sqrt(0.25 * 0.75 / 2) = 1.96 * 0.30619 = 0.60013
  assert.equal(t2!.n, 2);
  close(t2!.pif, 0.25, 'turn 2 PIF');
  assert.equal(t2!.low, 0); // 0.25 - 0.60 clipped
  close(t2!.high, 0.85013, 'turn 2 high');
  // turn 3: (2/3 + 1) / 2 = 5/6; 1.96 * sqrt((5/6)(1/6) / 2) = 1.96 * 0.26352 = 0.51650
  close(t3!.pif, 0.83333, 'turn 3 PIF');
  close(t3!.low, 0.31683, 'turn 3 low');
  assert.equal(t3!.high, 1); // 1.3498 clipped
});

test('PIF-N-K: a turn scores 1 when at least K of N samples have PIF = 1; corpus is the mean', () => {
  const turns = [
    { chatId: 'A', turn: 1, samplePifs: [1, 1, 0.5] }, // two perfect: K=1 yes, K=2 yes, K=3 no
    { chatId: 'A', turn: 2, samplePifs: [1, 1, 1] }, // three perfect: yes, yes, yes
    { chatId: 'B', turn: 2, samplePifs: [0, 0.5, 0] }, // none perfect: no, no, no
    { chatId: 'B', turn: 3, samplePifs: [1, 0, 0] }, // one perfect: yes, no, no
  ];
  assert.deepEqual(turns.map((t) => pifNK(t.samplePifs, 2)), [1, 1, 0, 0]);
  // K=1: 3/4, K=2: 2/4, K=3: 1/4 (non-increasing in K, eq. 5)
  assert.deepEqual(corpusPifNK(turns, 3), [0.75, 0.5, 0.25]);
});

test('PIF-N-K refuses a K outside 1..N and a turn with the wrong number of samples, naming it', () => {
  assert.throws(() => pifNK([1, 1], 3), /K must be an integer in 1\.\.N \(N = 2\), got 3/);
  assert.throws(() => corpusPifNK([{ chatId: 'c7', turn: 4, samplePifs: [1, 1] }], 3), /chat c7 turn 4: 2 sampled responses, expected N = 3/);
  assert.throws(() => pifPerTurn([{ chatId: 'c9', turn: 0, pif: 1 }]), /chat c9: turn 0 is not a positive integer/);
});
