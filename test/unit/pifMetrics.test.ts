/**
 * MMMT-IF's metrics (seed 002, eqs. 1-5 and the §5.1 Bernoulli interval) computed by hand on small
 * fixtures; every expected number below is worked out in the comment next to it, not by the code under test.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { followsAll, meanWithInterval, pif, pifNk, pifReport, type ScoredResponse } from '../../domain/multiturn/pif.js';

const T = true;
const F = false;
const close = (actual: number | undefined, expected: number) => assert.ok(actual !== undefined && Math.abs(actual - expected) < 1e-6, `expected ${expected}, got ${actual}`);

test('PIF counts every instruction given so far; before any instruction it defaults to 1 (seed 002 Fig. 5)', () => {
  assert.equal(pif([T, F, T]), 2 / 3);
  // Seed 002 Table 7 turn 15: 3 of 6 instructions followed.
  assert.equal(pif([F, T, T, F, T, F]), 0.5);
  // Fig. 5's caption: "The metric defaults to 1 if no instruction has been given."
  assert.equal(pif([]), 1);
  assert.equal(followsAll([T, T]), true);
  assert.equal(followsAll([T, F]), false);
  assert.equal(followsAll([]), true);
});

test('95% interval: p ± 1.96·sqrt(p(1-p)/n), clipped to [0, 1]', () => {
  // 10 scores, mean 0.5: half width 1.959964 · sqrt(0.25 / 10) = 1.959964 · 0.158114 = 0.3098975.
  const half = meanWithInterval([1, 0, 1, 0, 0.5, 0.5, 1, 0, 1, 0]);
  assert.equal(half?.n, 10);
  close(half?.mean, 0.5);
  close(half?.low, 0.1901025);
  close(half?.high, 0.8098975);
  // All perfect: p(1-p) = 0, the interval collapses on 1.
  assert.deepEqual(meanWithInterval([1, 1, 1]), { n: 3, mean: 1, low: 1, high: 1 });
  assert.equal(meanWithInterval([]), null);
});

/**
 * Four chats. A gets its first instruction at turn 2, so its turn 1 scores the default PIF = 1.
 *   turn 1: A [] = 1, B [T] = 1, C [F] = 0, D [T] = 1
 *   turn 2: A [T] = 1, B [T,F] = 0.5, C [F,F] = 0, D [T,T] = 1
 *   turn 3: D [T,T,F] = 2/3
 */
const chats: ScoredResponse[] = [
  { chatId: 'A', turn: 1, followed: [] },
  { chatId: 'A', turn: 2, followed: [T] },
  { chatId: 'B', turn: 1, followed: [T] },
  { chatId: 'B', turn: 2, followed: [T, F] },
  { chatId: 'C', turn: 1, followed: [F] },
  { chatId: 'C', turn: 2, followed: [F, F] },
  { chatId: 'D', turn: 1, followed: [T] },
  { chatId: 'D', turn: 2, followed: [T, T] },
  { chatId: 'D', turn: 3, followed: [T, T, F] },
];

test('corpus PIF, PIF per turn and per instruction count, by hand', () => {
  const report = pifReport(chats);
  // All 9 turns count (Table 3 averages "all 990 turns"): (1 + 1 + 0 + 1 + 1 + 0.5 + 0 + 1 + 2/3) / 9
  // = 6.1667 / 9 = 37/54 = 0.685185.
  assert.equal(report.corpus?.n, 9);
  close(report.corpus?.mean, 37 / 54);
  assert.equal(report.turnsBeforeInstruction, 1);

  assert.deepEqual(
    report.perTurn.map((row) => [row.turn, row.n]),
    [
      [1, 4],
      [2, 4],
      [3, 1],
    ],
  );
  // Turn 1: (1 + 1 + 0 + 1) / 4 = 0.75, half 1.959964 · sqrt(0.1875 / 4) = 0.4243439 → [0.3256561, 1 (clipped from 1.17)].
  close(report.perTurn[0]?.mean, 0.75);
  close(report.perTurn[0]?.low, 0.3256561);
  close(report.perTurn[0]?.high, 1);
  // Turn 2: mean 2.5 / 4 = 0.625, half 1.959964 · sqrt(0.234375 / 4) = 0.4744317 → low 0.1505683.
  close(report.perTurn[1]?.mean, 0.625);
  close(report.perTurn[1]?.low, 0.1505683);
  // Turn 3: a single score of 2/3.
  close(report.perTurn[2]?.mean, 2 / 3);

  // None given: A1 = 1 (Fig. 5's point at 0); one: B1, C1, D1, A2 = (1 + 0 + 1 + 1) / 4; two: B2, C2, D2 = 1.5 / 3; three: D3.
  assert.deepEqual(
    report.perInstructionCount.map((row) => [row.instructions, row.n]),
    [
      [0, 1],
      [1, 4],
      [2, 3],
      [3, 1],
    ],
  );
  close(report.perInstructionCount[0]?.mean, 1);
  close(report.perInstructionCount[1]?.mean, 0.75);
  close(report.perInstructionCount[2]?.mean, 0.5);
  close(report.perInstructionCount[3]?.mean, 2 / 3);
});

/** N = 3 samples per turn. Perfect samples (PIF = 1) per turn: A1 2, A2 3, B1 1, B2 0; C1 has no instruction, so 3 (PIF defaults to 1). */
const sampled: ScoredResponse[] = [
  { chatId: 'A', turn: 1, followed: [T] },
  { chatId: 'A', turn: 1, followed: [T] },
  { chatId: 'A', turn: 1, followed: [F] },
  { chatId: 'A', turn: 2, followed: [T, T] },
  { chatId: 'A', turn: 2, followed: [T, T] },
  { chatId: 'A', turn: 2, followed: [T, T] },
  { chatId: 'B', turn: 1, followed: [T, F] },
  { chatId: 'B', turn: 1, followed: [F, T] },
  { chatId: 'B', turn: 1, followed: [T, T] },
  { chatId: 'B', turn: 2, followed: [F] },
  { chatId: 'B', turn: 2, followed: [F] },
  { chatId: 'B', turn: 2, followed: [F] },
  { chatId: 'C', turn: 1, followed: [] },
  { chatId: 'C', turn: 1, followed: [] },
  { chatId: 'C', turn: 1, followed: [] },
];

test('PIF-N-K for K = 1..N, by hand, and non-increasing in K', () => {
  const rows = pifNk(sampled, 3);
  // K=1: A1, A2, B1, C1 → 4/5; K=2: A1, A2, C1 → 3/5; K=3: A2, C1 → 2/5 (C1's PIF is the default 1, eq. 4).
  assert.deepEqual(
    rows.map((row) => [row.k, row.turns, row.value]),
    [
      [1, 5, 0.8],
      [2, 5, 0.6],
      [3, 5, 0.4],
    ],
  );
  for (let i = 1; i < rows.length; i++) assert.ok((rows[i]?.value ?? 0) <= (rows[i - 1]?.value ?? 0));
  // With N = 1, PIF-1-1 is the share of turns with PIF = 1: A1 yes, B1 no.
  assert.deepEqual(
    pifNk([sampled[0]!, sampled[6]!], 1).map((row) => row.value),
    [0.5],
  );
  assert.deepEqual(
    pifNk([], 2).map((row) => row.value),
    [null, null],
  );
});

test('PIF-N-K refuses a turn with the wrong number of samples, naming it', () => {
  assert.throws(() => pifNk(sampled.slice(1), 3), /chat A turn 1 has 2 sampled responses, expected N = 3/);
  assert.throws(
    () =>
      pifNk(
        [
          { chatId: 'X', turn: 4, followed: [T] },
          { chatId: 'X', turn: 4, followed: [T, T] },
        ],
        2,
      ),
    /chat X turn 4 has samples scored against 1 and 2 instructions/,
  );
  assert.throws(() => pifNk(sampled, 0), /N must be a positive integer/);
});

/**
 * A second fixture, two chats (from the eval command's metric test). Chat B gives its first instruction
 * at turn 2. A: [T] = 1, [T,F] = 1/2, [T,T,F] = 2/3; B: [] = 1 (the default), [F] = 0, [T,T] = 1.
 */
const twoChats: ScoredResponse[] = [
  { chatId: 'A', turn: 1, followed: [T] },
  { chatId: 'A', turn: 2, followed: [T, F] },
  { chatId: 'A', turn: 3, followed: [T, T, F] },
  { chatId: 'B', turn: 1, followed: [] },
  { chatId: 'B', turn: 2, followed: [F] },
  { chatId: 'B', turn: 3, followed: [T, T] },
];

test('corpus PIF and PIF per turn on two chats, intervals clipped to [0, 1], by hand', () => {
  const report = pifReport(twoChats);
  // (1 + 0.5 + 0.6667 + 1 + 0 + 1) / 6 = 4.1667 / 6 = 25/36 = 0.69444; B's turn 1 counts as 1.
  assert.equal(report.corpus?.n, 6);
  close(report.corpus?.mean, 25 / 36);
  const [t1, t2, t3] = report.perTurn;
  // Turn 1: A 1 and B 1 (default): p = 1, p(1-p) = 0, so the interval is [1, 1].
  assert.deepEqual(t1, { turn: 1, n: 2, mean: 1, low: 1, high: 1 });
  // Turn 2: (0.5 + 0) / 2 = 0.25; 1.96 · sqrt(0.25 · 0.75 / 2) = 1.96 · 0.30619 = 0.60013.
  assert.equal(t2?.n, 2);
  close(t2?.mean, 0.25);
  assert.equal(t2?.low, 0); // 0.25 - 0.60 clipped
  assert.ok(Math.abs(t2!.high - 0.85013) < 5e-4, `turn 2 high ${t2?.high}`);
  // Turn 3: (2/3 + 1) / 2 = 5/6; 1.96 · sqrt((5/6)(1/6) / 2) = 1.96 · 0.26352 = 0.51650.
  close(t3?.mean, 5 / 6);
  assert.ok(Math.abs(t3!.low - 0.31683) < 5e-4, `turn 3 low ${t3?.low}`);
  assert.equal(t3?.high, 1); // 1.3498 clipped
  assert.throws(() => pifReport([{ chatId: 'c9', turn: 0, followed: [T] }]), /chat c9: turn 0 is not a positive integer/);
});

test('PIF-N-K on four turns of N = 3 samples, by hand (K=1: 3/4, K=2: 2/4, K=3: 1/4)', () => {
  // Per-sample PIFs: A1 [1, 1, 0.5] (two perfect), A2 [1, 1, 1] (three), B2 [0, 0.5, 0] (none), B3 [1, 0, 0] (one).
  const turn = (chatId: string, t: number, samples: boolean[][]) => samples.map((followed) => ({ chatId, turn: t, followed }));
  const samples = [
    ...turn('A', 1, [
      [T, T],
      [T, T],
      [T, F],
    ]),
    ...turn('A', 2, [[T], [T], [T]]),
    ...turn('B', 2, [
      [F, F],
      [T, F],
      [F, F],
    ]),
    ...turn('B', 3, [[T], [F], [F]]),
  ];
  assert.deepEqual(
    pifNk(samples, 3).map((row) => row.value),
    [0.75, 0.5, 0.25],
  );
  assert.throws(() => pifNk(turn('c7', 4, [[T], [T]]), 3), /chat c7 turn 4 has 2 sampled responses, expected N = 3/);
});
