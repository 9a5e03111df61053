/**
 * The summary's MM-IFEval line is a command that works for the build it is printed for:
 * `export --format mmifeval` refuses a build that reserved no eval split (unless `--all`) and every
 * multiturn build, whose held-out chats `mmif eval --multiturn` reads instead; and the exports of an
 * S3-compatible store need its endpoint.
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

test('an output on an S3-compatible store: the export commands carry its endpoint as MMIF_S3_ENDPOINT (they read the build without its config)', () => {
  const r = report({ datasetRoot: 's3://bucket/mmif/b1', heldOut });
  const lines = formatSummary(r, { s3Endpoint: 'http://127.0.0.1:7070' }).split('\n');
  assert.ok(lines.includes('TRL: MMIF_S3_ENDPOINT=http://127.0.0.1:7070 npm run mmif -- export --output s3://bucket/mmif --build-id b1 --format trl'), lines.join('\n'));
  assert.ok(lines.includes('MM-IFEval: MMIF_S3_ENDPOINT=http://127.0.0.1:7070 npm run mmif -- export --output s3://bucket/mmif --build-id b1 --format mmifeval'), lines.join('\n'));
  // AWS itself, or a local output: nothing to add.
  assert.ok(formatSummary(r).includes('\nTRL: npm run mmif -- export --output s3://bucket/mmif --build-id b1 --format trl\n'));
});

test('a source that held fewer samples than its share: the summary says where its slots went, and how many stay unused and why', () => {
  const lineOf = (r: BuildReport) =>
    formatSummary(r)
      .split('\n')
      .find((line) => line.startsWith('maxSamples:'));
  const short = [{ source: 1, type: 'allava', share: 13, held: 9 }];
  assert.equal(
    lineOf(report({ freeSlots: { freed: 4, unused: 0, short, given: [{ source: 0, type: 'chartqa', extra: 4 }] } })),
    'maxSamples: allava #1 held 9 of its 13; 4 free slots went to chartqa #0 (+4)',
  );
  assert.equal(
    lineOf(report({ freeSlots: { freed: 4, unused: 3, short, given: [{ source: 0, type: 'chartqa', extra: 1 }] } })),
    'maxSamples: allava #1 held 9 of its 13; 1 free slot went to chartqa #0 (+1); 3 of the 4 free slots stay unused: no source without a quota or richness had records left',
  );
  assert.equal(lineOf(report({})), undefined, 'every source filled its share');
});
