/**
 * What the Parquet files of a six-source build weigh against what they hold: the mixed build of
 * test/e2e/mixedBuild.test.ts (CC3M, ALLaVA, ChartQA, Geo170k, RICO, MultiUI fixtures; the same
 * config, shards of 4 unless --shard-size) on a real Temporal dev server with the HTTP simulator,
 * then `export --format trl`. pyarrow reads each file back (test/readers/parquet_overhead.py) and
 * sums the bytes of its values; the image bytes are summed apart.
 *
 * Run: npx tsx bench/parquetBytes.ts [--shard-size 4]
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import type { BuildConfigInput } from '../config/buildConfig.js';
import { TOOLS_DIR } from '../local/tools.js';
import type { BuildReport } from '../output/contracts/buildReport.js';
import { exportTrl } from '../output/formats/export.js';
import { buildLayout } from '../storage/buildLayout.js';
import { LocalStore } from '../storage/localStore.js';
import { mixedSources, writeMixedSources } from '../test/fixtures/mixedSources.js';
import { runReader } from '../test/harness/trainerReaders.js';
import { startStack } from '../test/harness/stack.js';

const { values } = parseArgs({ options: { 'shard-size': { type: 'string', default: '4' } } });
Runtime.install({ logger: new DefaultLogger('WARN') });
const dir = await mkdtemp(path.join(tmpdir(), 'mmif-bench-parquet-'));
const stack = await startStack({ simulator: { seed: 5 }, taskQueue: 'bench-parquet' });
try {
  await writeMixedSources(dir);
  const config: BuildConfigInput = {
    buildId: 'six',
    seed: 1,
    output: path.join(dir, 'out'),
    sources: mixedSources(dir),
    maxSamples: 40,
    shardSize: Number(values['shard-size']),
    models: { default: { model: 'mmif-sim-vlm' } },
  };
  const report = (await stack.client.workflow.execute('buildDataset', { taskQueue: stack.taskQueue, workflowId: 'six', args: [config] })) as BuildReport;
  const store = new LocalStore(path.join(dir, 'out'));
  await exportTrl(store, buildLayout('six'));
  const root = path.join(store.root, buildLayout('six').root);
  const files = (await readdir(root, { recursive: true })).filter((f) => f.endsWith('.parquet')).map((f) => path.join(root, f));
  const { files: weights } = await runReader<{ files: Array<{ path: string; file_bytes: number; content_bytes: number; image_bytes: number }> }>(
    `${TOOLS_DIR}venv/bin/python`,
    'parquet_overhead.py',
    files,
  );
  const total = (key: 'file_bytes' | 'content_bytes' | 'image_bytes') => weights.reduce((n, w) => n + w[key], 0);
  const mb = (n: number) => (n / 1e6).toFixed(2);
  console.log(
    `${report.counts.instruct} SFT records, ${report.counts.dpo} pairs, ${report.shards.planned} shards of ${config.shardSize}: ` +
      `${files.length} Parquet files (instruct, dpo, TRL sft, TRL dpo) weigh ${mb(total('file_bytes'))} MB ` +
      `for ${mb(total('content_bytes'))} MB of values, ${mb(total('image_bytes'))} MB of them image bytes ` +
      `(${(total('file_bytes') / total('content_bytes')).toFixed(3)}x the values, ${(total('file_bytes') / total('image_bytes')).toFixed(2)}x the images)`,
  );
} finally {
  await stack.stop();
  await rm(dir, { recursive: true, force: true });
}
