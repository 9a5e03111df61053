/**
 * Evaluation on held-out images, end to end on a Temporal dev server and the HTTP simulator. A
 * build with `holdout` reserves the eval split by image: no image of the split is in any training
 * file (SFT or DPO), and the split is written where `mmif eval --data` reads it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SAMPLES_DIR } from '../../cli/quickstartConfig.js';
import type { BuildConfigInput } from '../../config/buildConfig.js';
import type { BuildReport } from '../../output/buildReport.js';
import type { ShardManifest } from '../../output/manifest.js';
import type { MmifevalLine } from '../../output/mmifeval.js';
import { dpoRecordFromLine, instructRecordFromLine } from '../../output/sharegpt.js';
import { buildLayout, imagePathInDataset } from '../../storage/buildLayout.js';
import { LocalStore } from '../../storage/localStore.js';
import { getJson } from '../../storage/objectStore.js';
import { startStack, type Stack } from '../harness/stack.js';

let stack: Stack;
let dir: string;
let store: LocalStore;
const BUILD_ID = 'heldout';

before(async () => {
  stack = await startStack({ simulator: { seed: 3 }, taskQueue: 'mmif-eval' });
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-eval-temporal-'));
  store = new LocalStore(dir);
});

after(async () => {
  await stack?.stop();
  if (dir && !process.env.KEEP) await rm(dir, { recursive: true, force: true });
});

const buildConfig = (): BuildConfigInput => ({
  buildId: BUILD_ID,
  seed: 7,
  output: dir,
  sources: [{ type: 'cc3m', uri: SAMPLES_DIR, layout: 'files' }],
  maxSamples: 10,
  shardSize: 5,
  sliceSize: 5,
  holdout: { fraction: 0.3 },
  models: { default: { model: 'mmif-sim-vlm' } },
});

const lines = (body: Buffer | undefined): string[] => (body ?? Buffer.alloc(0)).toString().split('\n').filter(Boolean);

test('a build with holdout reserves an eval split by image: no held-out image is in any training file', async () => {
  const report = await stack.client.workflow.execute('buildDataset', { taskQueue: stack.taskQueue, workflowId: BUILD_ID, args: [buildConfig()] }) as BuildReport;
  const layout = buildLayout(BUILD_ID);
  const training = new Set<string>();
  const held = new Set<string>();
  let heldRecords = 0;
  for (let shard = 0; shard < report.shards.planned; shard++) {
    const manifest = (await getJson<ShardManifest>(store, layout.manifest(shard)))!;
    const sft = lines(await store.get(layout.instructJsonl(shard))).map(instructRecordFromLine);
    const dpo = lines(await store.get(layout.dpoJsonl(shard))).map(dpoRecordFromLine);
    const heldOut = lines(await store.get(layout.heldOutJsonl(shard))).map(instructRecordFromLine);
    for (const r of [...sft, ...dpo]) training.add(r.image_sha256);
    for (const r of heldOut) held.add(r.image_sha256);
    heldRecords += heldOut.length;
    assert.deepEqual(manifest.counts.instruct, sft.length, 'manifest counts are the training records');
    assert.equal(manifest.heldOut?.instruct, heldOut.length);
    assert.ok(manifest.files.some((f) => f.path === `heldout/shard-0000${shard}.jsonl` && f.rows === heldOut.length));
    const parquetRows = manifest.files.find((f) => f.path.startsWith('instruct/parquet/'))!.rows;
    assert.equal(parquetRows, sft.length, 'the Parquet shard holds the same training records');
  }
  assert.ok(held.size > 0 && training.size > 0, `both sides are non-empty: ${held.size} held-out, ${training.size} training images`);
  assert.deepEqual([...held].filter((sha) => training.has(sha)), [], 'no image is on both sides');
  assert.deepEqual(report.heldOut, { fraction: 0.3, seed: 7, instruct: heldRecords, dpo: report.heldOut!.dpo });
  assert.ok(report.heldOut!.dpo > 0, 'pairs of held-out images were left out of the training data');

  // The split mmif eval reads, written by the build itself.
  const bench = lines(await store.get(layout.mmifevalBench)).map((l) => JSON.parse(l) as MmifevalLine);
  const main = bench.filter((l) => l.infer_type === 'main');
  assert.equal(main.length, heldRecords);
  assert.deepEqual(new Set(main.map((l) => l.image)), new Set([...held].map(imagePathInDataset)));
  const ids = (await getJson<{ by: string; reservedByBuild: boolean; images: string[] }>(store, layout.mmifevalHoldoutIds))!;
  assert.equal(ids.by, 'image');
  assert.equal(ids.reservedByBuild, true);
  assert.deepEqual(ids.images, [...held].sort());
});
