/**
 * The dedupe race forced the bad way: one picture is in a CC3M folder (source 0, planned first) and
 * in RICO (source 1), and the RICO sample has the lower rank. With one shard at a time, the CC3M
 * shard runs and commits holding the picture before the RICO sample's image stage claims it, so only
 * the build's finalize step can drop the CC3M copy. The kept sample must be the lowest rank.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BuildConfigInput } from '../../config/buildConfig.js';
import { sampleIdFor } from '../../domain/hashing.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import type { ShardManifest } from '../../output/contracts/manifest.js';
import type { RejectRecord } from '../../output/contracts/records.js';
import { sampleRank } from '../../pipeline/planning/ranking.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { LocalStore } from '../../storage/localStore.js';
import { getJson } from '../../storage/objectStore.js';
import { sceneJpeg } from '../fixtures/images.js';
import { assertAccounting } from '../harness/datasetChecks.js';
import { startStack, type Stack } from '../harness/stack.js';

let stack: Stack;
let dir: string;

before(async () => {
  stack = await startStack({ simulator: { seed: 5 }, taskQueue: 'mmif-dedupe-race' });
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-dedupe-race-'));
  const shared = await sceneJpeg(7, 320, 480);
  await new LocalStore(path.join(dir, 'cc3m')).put('shared.jpg', shared);
  await new LocalStore(path.join(dir, 'cc3m')).put('own.jpg', await sceneJpeg(8, 320, 240));
  await new LocalStore(path.join(dir, 'rico')).put('combined/1.jpg', shared);

  // For the targets build: the same picture in CC3M beside another CC3M image, and in RICO beside a
  // screenshot too small for the image stage.
  const targets = (name: string) => new LocalStore(path.join(dir, 'targets', name));
  await targets('cc3m').put('shared.jpg', shared);
  await targets('cc3m').put('other.jpg', await sceneJpeg(9, 320, 240));
  await targets('rico').put('combined/1.jpg', await sceneJpeg(10, 120, 200));
  await targets('rico').put('combined/2.jpg', shared);
});

after(async () => {
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const lines = <T>(body: Buffer | undefined): T[] =>
  (body ?? Buffer.alloc(0))
    .toString()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as T);

test('a shard that committed a duplicate before a lower rank claimed its image loses it at finalize', async () => {
  const cc3mCopy = sampleIdFor('cc3m', 'shared');
  const ricoCopy = sampleIdFor('rico', '1');
  // A seed under which the RICO copy, planned in the later shard, has the lower rank.
  const seed = Array.from({ length: 64 }, (_, s) => s).find((s) => sampleRank(s, ricoCopy) < sampleRank(s, cc3mCopy))!;
  const output = path.join(dir, 'out');
  const config: BuildConfigInput = {
    buildId: 'race',
    seed,
    output,
    sources: [
      { type: 'cc3m', uri: path.join(dir, 'cc3m'), layout: 'flat', quota: 2 },
      { type: 'rico', uri: path.join(dir, 'rico'), quota: 1 },
    ] as BuildConfigInput['sources'],
    maxSamples: 3,
    shardSize: 2,
    maxParallelShards: 1,
    models: { default: { model: 'mmif-sim-vlm' } },
  };
  const report = (await stack.client.workflow.execute('buildDataset', { taskQueue: stack.taskQueue, workflowId: 'race', args: [config] })) as BuildReport;
  assert.equal(report.shards.failed, 0);

  const store = new LocalStore(output);
  const layout = buildLayout('race');
  const kept = new Set<string>();
  const rejects: RejectRecord[] = [];
  for (let shard = 0; shard < report.shards.planned; shard++) {
    for (const r of lines<{ id: string }>(await store.get(layout.instructJsonl(shard)))) kept.add(r.id);
    rejects.push(...lines<RejectRecord>(await store.get(layout.rejects(shard))));
  }
  assert.ok(kept.has(ricoCopy), `the lower rank keeps the picture; rejects: ${JSON.stringify(rejects)}`);
  assert.ok(!kept.has(cc3mCopy), 'the higher rank, committed first, is dropped');
  const dropped = rejects.find((r) => r.id === cc3mCopy)!;
  assert.equal(dropped.reason, `duplicate-image: same image as sample ${ricoCopy}`);
  // Shard 0 committed it, then was committed again by finalize without it.
  assert.equal((await getJson<ShardManifest>(store, layout.manifest(0)))!.revision, 2);
  assert.equal(report.accounting[0]!.rejected['duplicate-image'], 1);
  await assertAccounting(store, report, { 0: 2, 1: 1 });
});

test('with targets, a copy committed in an earlier round loses to a lower rank drawn later, before the next round is planned', async () => {
  const cc3mCopy = sampleIdFor('cc3m', 'shared');
  const cc3mOther = sampleIdFor('cc3m', 'other');
  const tooSmall = sampleIdFor('rico', '1');
  const ricoCopy = sampleIdFor('rico', '2');
  const rank = (seed: number, id: string) => sampleRank(seed, id);
  // Round 0 draws the CC3M copy and the too-small screenshot; round 1 the RICO copy, of lower rank
  // than the committed CC3M copy; round 2 the other CC3M image, to make up for the dropped copy.
  const seed = Array.from({ length: 256 }, (_, s) => s).find(
    (s) => rank(s, cc3mCopy) < rank(s, cc3mOther) && rank(s, tooSmall) < rank(s, ricoCopy) && rank(s, ricoCopy) < rank(s, cc3mCopy),
  )!;
  const output = path.join(dir, 'targets-out');
  const config: BuildConfigInput = {
    buildId: 'race-targets',
    seed,
    output,
    sources: [
      { type: 'cc3m', uri: path.join(dir, 'targets', 'cc3m'), layout: 'flat' },
      { type: 'rico', uri: path.join(dir, 'targets', 'rico') },
    ] as BuildConfigInput['sources'],
    maxSamples: 10,
    targets: { instruct: 2, expectedYield: 1 },
    // Lenient, so the sample that makes up for the dropped copy is accepted (the race is the point).
    verification: { passThreshold: 0.5 },
    shardSize: 2,
    models: { default: { model: 'mmif-sim-vlm' } },
  };
  const build = (input: BuildConfigInput) =>
    stack.client.workflow.execute('buildDataset', { taskQueue: stack.taskQueue, workflowId: 'race-targets', args: [input] }) as Promise<BuildReport>;
  const report = await build(config);
  const store = new LocalStore(output);
  const layout = buildLayout('race-targets');
  const kept = new Set<string>();
  const rejects: RejectRecord[] = [];
  for (let shard = 0; shard < report.shards.planned; shard++) {
    for (const r of lines<{ id: string }>(await store.get(layout.instructJsonl(shard)))) kept.add(r.id);
    rejects.push(...lines<RejectRecord>(await store.get(layout.rejects(shard))));
  }
  assert.ok(kept.has(ricoCopy) && !kept.has(cc3mCopy), `kept ${[...kept]}; rejects ${JSON.stringify(rejects.map((r) => [r.id, r.reason]))}`);
  assert.equal(rejects.find((r) => r.id === cc3mCopy)?.reason, `duplicate-image: same image as sample ${ricoCopy}`);
  assert.ok(kept.has(cc3mOther), `the next round made up for the dropped copy: ${JSON.stringify(report.targets)}`);
  assert.equal(report.targets?.outcome, 'targets-met');
  assert.deepEqual(
    report.targets!.sources.map((s) => s.kept.instruct),
    [1, 1],
  );
  await assertAccounting(store, report, { 0: 2, 1: 2 });
});
