/**
 * Every Parquet file a build writes weighs about what it holds. One single-turn and one multiturn
 * build, at the default shard size, on a real Temporal dev server with the HTTP simulator, then
 * `export --format trl` of each: instruct, dpo, chats, chat pairs and the four TRL tables. pyarrow
 * (not the writer) reads each file back and sums the bytes of its values (test/readers/parquet_overhead.py);
 * the file may exceed that by at most 5%. No binary column keeps min/max statistics, which is what made
 * shards several times their content (a copy of the extreme images in every page and chunk header).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BuildConfigInput } from '../../config/buildConfig.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import { exportTrl } from '../../output/formats/export.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { LocalStore } from '../../storage/localStore.js';
import { writeCc3m } from '../fixtures/cc3m.js';
import { TOOLS_DIR } from '../../local/tools.js';
import { startStack, type Stack } from '../harness/stack.js';
import { runReader } from '../harness/trainerReaders.js';

/** The most a Parquet file may weigh over the bytes of the values it holds. */
const MAX_OVERHEAD = 1.05;
const SAMPLES = 64;

let stack: Stack;
let dir: string;

interface FileWeight {
  path: string;
  rows: number;
  file_bytes: number;
  content_bytes: number;
  binary_columns_with_statistics: string[];
}

before(async () => {
  stack = await startStack({ simulator: { seed: 11 }, taskQueue: 'mmif-lean-parquet' });
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-lean-parquet-'));
  await writeCc3m(new LocalStore(path.join(dir, 'cc3m')), 'webdataset', { perShard: SAMPLES, shards: 1 });
});

after(async () => {
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function buildAndExport(buildId: string, extra: Partial<BuildConfigInput>): Promise<string[]> {
  const config: BuildConfigInput = {
    buildId,
    seed: 3,
    output: path.join(dir, 'out'),
    sources: [{ type: 'cc3m', uri: path.join(dir, 'cc3m'), layout: 'webdataset' }],
    maxSamples: SAMPLES,
    models: { default: { model: 'mmif-sim-vlm' }, rejected: { model: 'mmif-sim-vlm-mini' } },
    ...extra,
  };
  const report: BuildReport = await stack.client.workflow.execute('buildDataset', { taskQueue: stack.taskQueue, workflowId: buildId, args: [config] });
  assert.equal(report.shards.failed, 0);
  const store = new LocalStore(path.join(dir, 'out'));
  await exportTrl(store, buildLayout(buildId));
  const root = path.join(store.root, buildLayout(buildId).root);
  return (await readdir(root, { recursive: true }))
    .filter((f) => f.endsWith('.parquet'))
    .map((f) => path.join(root, f))
    .sort();
}

test('every Parquet output weighs at most 5% over its content, with no statistics on binary columns', async (t) => {
  const files = [
    ...(await buildAndExport('lean-single', {})),
    ...(await buildAndExport('lean-chat', { mode: 'multiturn', maxSamples: 16, chat: { turns: 4, maxInstructions: 3 }, verification: { maxRegenerations: 8 } })),
  ];
  const kinds = (build: string) => [...new Set(files.filter((f) => f.includes(`/${build}/`)).map((f) => path.dirname(path.relative(path.join(dir, 'out', build), f))))];
  assert.deepEqual(kinds('lean-single'), ['dpo/parquet', 'instruct/parquet', 'trl/dpo', 'trl/sft'], 'instruct, dpo and both TRL tables of the single-turn build');
  assert.deepEqual(kinds('lean-chat'), ['chat-dpo/parquet', 'chat/parquet', 'trl/dpo', 'trl/sft'], 'chats, chat pairs and both TRL tables of the multiturn build');

  const { files: weights } = await runReader<{ files: FileWeight[] }>(`${TOOLS_DIR}venv/bin/python`, 'parquet_overhead.py', files);
  for (const w of weights) {
    const name = path.relative(path.join(dir, 'out'), w.path);
    t.diagnostic(`${name}: ${w.rows} rows, ${w.file_bytes} bytes for ${w.content_bytes} bytes of values`);
    assert.ok(w.rows > 0, `${name} holds rows`);
    assert.deepEqual(w.binary_columns_with_statistics, [], `${name}: binary columns keep no statistics`);
    assert.ok(
      w.file_bytes <= MAX_OVERHEAD * w.content_bytes,
      `${name}: ${w.file_bytes} bytes for ${w.content_bytes} bytes of values (${(w.file_bytes / w.content_bytes).toFixed(3)}x, at most ${MAX_OVERHEAD}x)`,
    );
  }
});
