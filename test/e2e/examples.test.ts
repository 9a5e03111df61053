/**
 * Every config in examples/ is valid as shipped (read as `mmif build` reads it: `$schema` and
 * relative paths included) and builds: each runs a tiny slice (a sample or two per source) on the
 * simulator, with its data paths pointed at small datasets in each source's release layout (the S3
 * example at versitygw). The eval input runs on the held-out split of a sliced build. One stack for
 * all, the builds concurrently, to keep this short.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readConfig } from '../../cli/configFile.js';
import { evalWorkflowId, parseEvalConfig } from '../../config/evalConfig.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import type { EvalSummary } from '../../output/reports/evalOutputs.js';
import { exportMmifeval } from '../../output/formats/export.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { LocalStore } from '../../storage/localStore.js';
import { openStore } from '../../storage/openStore.js';
import type { S3Options } from '../../storage/s3Store.js';
import { writeAllava } from '../fixtures/allava.js';
import { writeCc3m } from '../fixtures/cc3m.js';
import { writeFolderLayout } from '../fixtures/folderSources.js';
import { writeChartqa } from '../fixtures/chartqa.js';
import { writeGeo170k } from '../fixtures/geo170k.js';
import { MULTIUI_FILE, writeMultiui } from '../fixtures/multiui.js';
import { writeRico } from '../fixtures/rico.js';
import { startS3Server, useS3Env, type S3Server } from '../harness/s3Server.js';
import { startStack, type Stack } from '../harness/stack.js';

const EXAMPLES = fileURLToPath(new URL('../../examples/', import.meta.url));
let stack: Stack;
let s3: S3Server;
let s3Options: S3Options;
let dir: string;

before(async () => {
  [stack, s3] = await Promise.all([startStack({ simulator: { seed: 4 }, taskQueue: 'mmif-examples' }), startS3Server()]);
  s3Options = useS3Env(s3);
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-examples-'));
  const local = (type: string) => new LocalStore(path.join(dir, type));
  await Promise.all([
    writeCc3m(local('cc3m'), 'files', { perShard: 3, shards: 1 }),
    writeCc3m(openStore(`s3://${s3.bucket}/cc3m-wds`, s3Options), 'webdataset', { perShard: 2, shards: 1 }),
    writeAllava(local('allava')),
    writeChartqa(local('chartqa')),
    writeGeo170k(local('geo170k')),
    writeRico(local('rico')),
    writeMultiui(local('multiui')),
    writeFolderLayout(local('imagefolder'), 'imagefolder-csv'),
    writeFolderLayout(local('llava'), 'llava-folder'),
  ]);
});

after(async () => {
  await stack?.stop();
  await s3?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const buildExamples = async () => (await readdir(EXAMPLES)).filter((name) => name.endsWith('.json') && !name.endsWith('.schema.json') && name !== 'eval.json').sort();

/** The Hub layouts' examples read the Hub fixtures (test/fixtures/hub/make_hub_fixtures.py), source by source. */
const HUB_FIXTURES = fileURLToPath(new URL('../fixtures/hub/data/', import.meta.url));
const HUB_EXAMPLES: Record<string, string[]> = {
  'hub-allava.json': ['allava-hub'],
  'hub-cc3m.json': ['cc3m-wds'],
  'hub-chartqa.json': ['hf-cache/datasets--HuggingFaceM4--ChartQA/snapshots/b605b6e08b57faf4359aeb2fe6a3ca595f99b6c5'],
  'hub-geo170k.json': ['geo170k-hub'],
  'hub-onevision.json': ['geo170k-onevision', 'allava-onevision15'],
  'hub-rico.json': ['rico-screen2words'],
  'parquet.json': ['chartqa-lmms'],
};

/** The example as shipped, its data pointed at the test datasets and cut to a sample or two per source. */
function slice(config: Record<string, unknown>, name: string): Record<string, unknown> {
  const sources = (config.sources as Array<Record<string, unknown>>).map((source, i) => {
    const s3Source = String(source.uri).startsWith('s3://');
    const hub = HUB_EXAMPLES[name]?.[i];
    const uri = s3Source ? `s3://${s3.bucket}/cc3m-wds` : hub ? path.join(HUB_FIXTURES, hub) : path.join(dir, String(source.type));
    // The test MultiUI file is not named as the release's; everything else is as in the example.
    const files = source.type === 'multiui' ? { files: [MULTIUI_FILE] } : {};
    const quota = source.quota === undefined ? {} : { quota: 1 };
    return { ...source, uri, ...files, ...quota };
  });
  const output = String(config.output).startsWith('s3://') ? `s3://${s3.bucket}/out` : path.join(dir, 'out');
  return {
    ...config,
    output,
    ...(String(config.output).startsWith('s3://') ? { s3: s3Options } : {}),
    sources,
    maxSamples: 2 * sources.length,
    shardSize: 4,
    chat: config.chat ? { ...(config.chat as object), turns: 2 } : undefined,
  };
}

test('every example is a valid config as shipped, with $schema', async () => {
  const names = await buildExamples();
  // One per source in its release layout, one per Hub layout, generic Parquet, ImageFolder and LLaVA, the paper's mix, a multiturn build, S3 (eval.json apart).
  assert.deepEqual(names, [
    'allava.json',
    'cc3m.json',
    'chartqa.json',
    'geo170k.json',
    'hub-allava.json',
    'hub-cc3m.json',
    'hub-chartqa.json',
    'hub-geo170k.json',
    'hub-onevision.json',
    'hub-rico.json',
    'imagefolder.json',
    'llava.json',
    'mix-cc3m_13k+dive_4k+allava_6k.json',
    'multiturn.json',
    'multiui.json',
    'parquet.json',
    'rico.json',
    's3.json',
  ]);
  for (const name of names) {
    const raw = JSON.parse(await readFile(path.join(EXAMPLES, name), 'utf8')) as Record<string, unknown>;
    assert.equal(raw.$schema, './build-config.schema.json', name);
    const config = await readConfig(path.join(EXAMPLES, name));
    for (const source of config.sources) assert.ok(source.uri.startsWith('s3://') || path.isAbsolute(source.uri), `${name}: ${source.uri} resolved`);
  }
  assert.deepEqual(
    (await readConfig(path.join(EXAMPLES, 'mix-cc3m_13k+dive_4k+allava_6k.json'))).sources.map((s) => [s.type, s.quota]),
    [
      ['cc3m', 13000],
      ['allava', 6000],
      ['multiui', 1334],
      ['chartqa', 1333],
      ['geo170k', 1333],
    ],
  );
  const evalInput = JSON.parse(await readFile(path.join(EXAMPLES, 'eval.json'), 'utf8')) as Record<string, unknown>;
  assert.equal(evalInput.$schema, './eval-input.schema.json');
  parseEvalConfig(evalInput);
});

test("every example builds a tiny slice on the simulator; the eval input runs on a sliced build's held-out split", async () => {
  const names = await buildExamples();
  const reports = await Promise.all(
    names.map(async (name) => {
      const config = slice(JSON.parse(await readFile(path.join(EXAMPLES, name), 'utf8')) as Record<string, unknown>, name);
      const report = (await stack.client.workflow.execute('buildDataset', { taskQueue: stack.taskQueue, workflowId: String(config.buildId), args: [config] })) as BuildReport;
      return [name, report] as const;
    }),
  );
  for (const [name, report] of reports) {
    assert.equal(report.shards.failed, 0, name);
    assert.ok(report.counts.planned > 0, `${name}: nothing planned`);
  }

  // The eval input, on a held-out split exported from the sliced ChartQA build.
  const chartqa = reports.find(([name]) => name === 'chartqa.json')![1];
  const out = new LocalStore(path.join(dir, 'out'));
  await exportMmifeval(out, buildLayout(chartqa.buildId), { all: true });
  const shipped = JSON.parse(await readFile(path.join(EXAMPLES, 'eval.json'), 'utf8')) as Record<string, unknown>;
  const input = { ...shipped, data: chartqa.datasetRoot, model: { ...(shipped.model as object), baseUrl: stack.simulator.url } };
  const summary = (await stack.client.workflow.execute('evaluateModel', {
    taskQueue: stack.taskQueue,
    workflowId: evalWorkflowId(String(shipped.evalId)),
    args: [input],
  })) as EvalSummary;
  assert.equal(summary.mode, 'single-turn');
  assert.ok(summary.requests.paid > 0 && summary.files.length > 0, JSON.stringify(summary));
});
