/**
 * The summary's MM-IFEval line is a command that works for the build it is printed for:
 * `export --format mmifeval` refuses a build that reserved no eval split (unless `--all`) and every
 * multiturn build, whose held-out chats `mmif eval --multiturn` reads instead.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatSummary } from '../../cli/summary.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';

const report = (extra: Partial<BuildReport>): BuildReport =>
  ({
    buildId: 'b1',
    datasetRoot: '/data/out/b1',
    simulated: false,
    shards: { planned: 1, committed: 1, failed: 0 },
    failedShards: [],
    counts: { planned: 4, instruct: 3, dpo: 2, rejectedSamples: 1, rejectedPairs: 1 },
    rejectsByStage: {},
    usage: {},
    models: {},
    accounting: [],
    ...extra,
  }) as BuildReport;

const mmifevalLines = (r: BuildReport) =>
  formatSummary(r)
    .split('\n')
    .filter((line) => line.startsWith('MM-IFEval'));
const heldOut = { fraction: 0.05, seed: 0, instruct: 1, dpo: 1 };

test('a single-turn build with holdout: the export of its split', () => {
  assert.deepEqual(mmifevalLines(report({ heldOut })), ['MM-IFEval: npm run mmif -- export --output /data/out --build-id b1 --format mmifeval']);
});

test('a single-turn build without holdout: the export of every sample (--all), the one its export accepts', () => {
  assert.deepEqual(mmifevalLines(report({})), [
    'MM-IFEval: npm run mmif -- export --output /data/out --build-id b1 --format mmifeval --all  # every sample, to score the data itself: this build reserved no eval split ("holdout")',
  ]);
});

test('a multiturn build: mmif eval --multiturn on its held-out chats, or nothing when it reserved none', () => {
  assert.deepEqual(mmifevalLines(report({ mode: 'multiturn', heldOut })), ['MM-IFEval: npm run mmif -- eval --data /data/out/b1 --multiturn --model <model>']);
  assert.deepEqual(mmifevalLines(report({ mode: 'multiturn' })), []);
});
