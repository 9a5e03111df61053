import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ShardManifest } from '../../output/contracts/manifest.js';
import { formatAccount, sourceAccounting } from '../../output/reports/sourceAccounting.js';
import type { BuildPlan } from '../../pipeline/planning/planBuild.types.js';

const plan: BuildPlan = {
  configFingerprint: 'f',
  sampleCount: 5,
  shardCount: 3,
  shardSizes: [2, 1, 2],
  shardSources: [0, 0, 1],
  rounds: [0],
  sourceProblems: 1,
  sources: [
    {
      type: 'cc3m',
      name: 'cc3m',
      target: 3,
      read: 10,
      samples: 8,
      filtered: { 'img2dataset-failed_to_download': 1 },
      problems: { encoding: 1 },
      selected: 3,
      ranked: 3,
      exhausted: false,
    },
    {
      type: 'rico',
      name: 'rico-screens',
      target: 2,
      read: 6,
      samples: 6,
      filtered: {},
      problems: {},
      selected: 2,
      ranked: 5,
      exhausted: false,
      richness: { selected: 2, 'below-min-score': 3 },
    },
  ],
};

const manifest = (instruct: number, rejected: Record<string, number>) =>
  ({ counts: { planned: 0, instruct, dpo: 0, rejectedSamples: 0, rejectedPairs: 0 }, rejectedSamplesByReason: rejected }) as unknown as ShardManifest;

test('each source: read = planned + not selected + filtered + problems, planned = accepted + rejected + uncommitted', () => {
  const [cc3m, rico] = sourceAccounting(plan, [manifest(1, { 'too-small': 1 }), manifest(0, { 'duplicate-image': 1 }), undefined]);
  assert.deepEqual(cc3m, {
    source: 0,
    type: 'cc3m',
    name: 'cc3m',
    read: 10,
    planned: 3,
    notSelected: { 'not-drawn': 5 },
    filtered: { 'img2dataset-failed_to_download': 1 },
    problems: { encoding: 1 },
    accepted: 1,
    heldOut: 0,
    rejected: { 'too-small': 1, 'duplicate-image': 1 },
    uncommitted: 0,
    balanced: true,
  });
  // Richness left three candidates out; one never scored; its only shard did not commit.
  assert.deepEqual([rico!.notSelected, rico!.uncommitted, rico!.balanced], [{ 'not-drawn': 1, 'richness:below-min-score': 3 }, 2, true]);
  assert.match(
    formatAccount(rico!),
    /^rico-screens #1: read 6 = planned 2 \+ not selected 4 \(not-drawn 1, richness:below-min-score 3\) \+ filtered 0 \+ problems 0; planned 2 = accepted 0 \+ rejected 0 \+ uncommitted 2$/,
  );
});

test('a term that loses a record unbalances its source, and says so', () => {
  const [cc3m] = sourceAccounting(plan, [manifest(1, {}), manifest(0, { 'duplicate-image': 1 }), undefined]);
  assert.equal(cc3m!.balanced, false);
  assert.match(formatAccount(cc3m!), /DOES NOT BALANCE/);
  const heldOut = { ...manifest(0, { 'too-small': 1 }), heldOut: { instruct: 1, dpo: 1 } } as ShardManifest;
  assert.equal(sourceAccounting(plan, [heldOut, manifest(0, { 'duplicate-image': 1 }), undefined])[0]!.balanced, true, 'a held-out sample is its own term');
  const lost = sourceAccounting({ ...plan, sources: [{ ...plan.sources[0]!, read: 11 }, plan.sources[1]!] }, [
    manifest(1, { 'too-small': 1 }),
    manifest(0, { 'duplicate-image': 1 }),
    undefined,
  ]);
  assert.equal(lost[0]!.balanced, false);
});
