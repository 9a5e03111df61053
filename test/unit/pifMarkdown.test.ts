/** The multi-turn report section (output/reports/pifMarkdown.ts) rendered from metrics computed on a small fixture. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pifNk, pifReport, type ScoredResponse } from '../../domain/multiturn/pif.js';
import { renderPifMarkdown } from '../../output/reports/pifMarkdown.js';

const T = true;
const F = false;
// Turn 1: A has no instruction yet (PIF 1 by seed 002's default), B follows its one; turn 2: A 1/1, B 1/2.
const plain: ScoredResponse[] = [
  { chatId: 'A', turn: 1, followed: [] },
  { chatId: 'B', turn: 1, followed: [T] },
  { chatId: 'A', turn: 2, followed: [T] },
  { chatId: 'B', turn: 2, followed: [T, F] },
];
// The same turns with every instruction appended: B's turn 2 now follows both.
const appended: ScoredResponse[] = plain.map((r) => ({ ...r, followed: r.followed.map(() => T) }));

test('the Markdown section: corpus PIF, the ablation in points, tables per turn and per instruction count, PIF-N-K', () => {
  const markdown = renderPifMarkdown({
    model: 'sim-vl',
    simulated: true,
    report: pifReport(plain),
    nk: pifNk([...plain, ...appended], 2),
    appendAll: pifReport(appended),
  });
  assert.match(markdown, /Model: `sim-vl` — \*\*simulated\*\*/);
  // (1 + 1 + 1 + 0.5) / 4 = 0.875; appended: 1.000, +12.5 points.
  assert.match(markdown, /Corpus PIF: 0\.875 \[\d\.\d{3}, 1\.000\] over 4 scored turns\. 1 turn came before any instruction \(PIF 1 by seed 002's default, included\)/);
  assert.match(markdown, /With every instruction appended at the end: 1\.000 \[1\.000, 1\.000\] over 4 scored turns \(\+12\.5 points\)\./);
  assert.match(markdown, /\| 1 \| 2 \| 1\.000 \| \[1\.000, 1\.000\] \|\n\| 2 \| 2 \| 0\.750 \|/);
  assert.match(markdown, /\| 0 \| 1 \| 1\.000 \| \[1\.000, 1\.000\] \|/, "no instruction given: A turn 1, Fig. 5's point at 0");
  assert.match(markdown, /\| 2 \| 1 \| 0\.500 \| \[0\.000, 1\.000\] \|/, 'two instructions given: B turn 2 only');
  // Per turn, perfect answers out of 2: A1 2, B1 2, A2 2, B2 1 → PIF-2-1 = 4/4, PIF-2-2 = 3/4.
  assert.match(markdown, /\| PIF-2-1 \| 1\.000 \|\n\| PIF-2-2 \| 0\.750 \|/);
});

test('a real run is not marked simulated, and a run without samples has no PIF-N-K table', () => {
  const markdown = renderPifMarkdown({ model: 'gpt-4o', simulated: false, report: pifReport(plain), nk: [] });
  assert.doesNotMatch(markdown, /simulated/);
  assert.doesNotMatch(markdown, /PIF-\d-\d/);
});
