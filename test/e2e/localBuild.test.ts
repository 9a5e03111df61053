/**
 * Builds into a local directory. Users launch builds with the `temporal` CLI: the first test runs
 * the real binary against a dev server with a project worker (`workflow start --input-file`,
 * `workflow query --name progress`, `workflow result`) and checks the dataset landed. The others
 * check that a duplicate image is dropped, and that a build continues as new and carries its
 * progress across runs.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { temporalCliPath } from '../../local/tools.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { sampleRank } from '../../pipeline/planning/ranking.js';
import type { ShardManifest } from '../../output/contracts/manifest.js';
import { LocalStore } from '../../storage/localStore.js';
import { writeCc3m } from '../fixtures/cc3m.js';
import { startStack, type Stack } from '../harness/stack.js';

const run = promisify(execFile);
let stack: Stack;
let dir: string;

before(async () => {
  stack = await startStack({ simulator: { seed: 2 }, taskQueue: 'mmif-cli' });
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-cli-'));
  const source = new LocalStore(path.join(dir, 'cc3m'));
  const records = await writeCc3m(source, 'flat', { perShard: 3, shards: 2 });
  await source.put('zz-copy.jpg', records[0]!.image); // the same image under another name
});

after(async () => {
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const SEED = 11;
const buildConfig = (buildId: string, extra: Record<string, unknown> = {}) => ({
  buildId,
  seed: SEED,
  output: path.join(dir, 'out'),
  sources: [{ type: 'cc3m', uri: path.join(dir, 'cc3m'), layout: 'flat' }],
  maxSamples: 7,
  shardSize: 3,
  image: { minShortSide: 100 },
  models: { default: { model: 'mmif-sim-vlm' } },
  ...extra,
});

function temporal(...args: string[]) {
  return run(temporalCliPath(), [...args, '--address', stack.server.address, '--namespace', 'default'], { env: { ...process.env } });
}

test('temporal workflow start --input-file launches a build that completes', async () => {
  const buildFile = path.join(dir, 'build.json');
  await writeFile(buildFile, JSON.stringify(buildConfig('cli-build')));
  const started = await temporal('workflow', 'start', '--type', 'buildDataset', '--task-queue', stack.taskQueue, '--workflow-id', 'cli-build', '--input-file', buildFile);
  assert.match(started.stdout, /cli-build/);

  const result = await temporal('workflow', 'result', '--workflow-id', 'cli-build', '--output', 'json');
  const report = JSON.parse(result.stdout) as { result?: { shards: { committed: number; planned: number } }; status?: string };
  assert.equal(report.status, 'COMPLETED', result.stdout);
  assert.deepEqual(report.result!.shards, { planned: 3, committed: 3, failed: 0 });

  const query = await temporal('workflow', 'query', '--workflow-id', 'cli-build', '--name', 'progress', '--output', 'json');
  const progress = JSON.parse(query.stdout) as { queryResult: Array<{ phase: string; shards: { committed: number } }> };
  assert.equal(progress.queryResult[0]!.phase, 'done');
  assert.equal(progress.queryResult[0]!.shards.committed, 3);

  const layout = buildLayout('cli-build');
  let planned = 0;
  const rejects: Array<{ id: string; source_id: string; reason: string }> = [];
  for (const shard of [0, 1, 2]) {
    const manifest = JSON.parse(await readFile(path.join(dir, 'out', layout.manifest(shard)), 'utf8')) as ShardManifest;
    planned += manifest.counts.planned;
    assert.equal(manifest.counts.instruct + manifest.counts.rejectedSamples, manifest.counts.planned);
    const lines = (await readFile(path.join(dir, 'out', layout.rejects(shard)), 'utf8')).split('\n').filter(Boolean);
    rejects.push(...lines.map((l) => JSON.parse(l) as { id: string; source_id: string; reason: string }));
  }
  assert.equal(planned, 7);
  // Exactly one of the two identical images is dropped as a duplicate, naming the one kept: the lower rank.
  const duplicates = rejects.filter((r) => r.reason.startsWith('duplicate-image: same image as sample cc3m-'));
  assert.equal(duplicates.length, 1, JSON.stringify(rejects));
  assert.ok(['zz-copy', '000000000'].includes(duplicates[0]!.source_id));
  const kept = duplicates[0]!.reason.replace('duplicate-image: same image as sample ', '');
  assert.ok(sampleRank(SEED, kept) < sampleRank(SEED, duplicates[0]!.id), 'the lower rank of the two is kept');
});

test('a build continues as new every shardsPerRun shards and carries its progress', async () => {
  const handle = await stack.client.workflow.start('buildDataset', {
    taskQueue: stack.taskQueue,
    workflowId: 'can-build',
    args: [buildConfig('can-build', { shardSize: 2, shardsPerRun: 1, maxParallelShards: 2 })],
  });
  const report = (await handle.result()) as { shards: { planned: number; committed: number }; counts: { planned: number } };
  assert.deepEqual(report.shards, { planned: 4, committed: 4, failed: 0 });
  assert.equal(report.counts.planned, 7);

  const runs: string[] = [];
  for await (const execution of stack.client.workflow.list({ query: `WorkflowId = 'can-build'` })) runs.push(execution.status.name);
  assert.deepEqual(runs.sort(), ['COMPLETED', 'CONTINUED_AS_NEW', 'CONTINUED_AS_NEW', 'CONTINUED_AS_NEW']);

  const progress = await stack.client.workflow.getHandle('can-build').query<{ shards: { committed: number }; phase: string }>('progress');
  assert.equal(progress.phase, 'done');
  assert.equal(progress.shards.committed, 4, 'progress from earlier runs is carried over');
});
