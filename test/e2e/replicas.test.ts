/**
 * A build against three replicas of one model (three simulators, the same seed) with image-affine
 * routing, one replica killed mid-build: the build completes with no sample lost, its records
 * byte-identical to a one-endpoint build of the same seed, and `mmif status`, the build report and
 * the dataset card list the replicas with their shares, the killed one taken out and its samples
 * re-routed.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BuildConfigInput } from '../../config/buildConfig.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { startSimulator, type SimulatorHandle } from '../../simulator/server.js';
import { LocalStore } from '../../storage/localStore.js';
import { endpointLabel } from '../../telemetry/metrics.js';
import { writeCc3m } from '../fixtures/cc3m.js';
import { assertCommittedShardsIntact, eventually } from '../harness/datasetChecks.js';
import { mmif } from '../harness/mmifCli.js';
import { startStack, type Stack } from '../harness/stack.js';

const SEED = 21;
const SHARDS = 2;
let stack: Stack;
let replicas: SimulatorHandle[];
let dir: string;

before(async () => {
  [stack, replicas] = await Promise.all([
    startStack({ simulator: { seed: SEED }, taskQueue: 'mmif-replicas' }),
    Promise.all([0, 1, 2].map(() => startSimulator({ seed: SEED, faults: { latencyMs: 40 } }))),
  ]);
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-replicas-'));
  await writeCc3m(new LocalStore(path.join(dir, 'cc3m')), 'files', { perShard: 6, shards: SHARDS });
});

after(async () => {
  await stack?.stop();
  await Promise.all((replicas ?? []).map((r) => r.close().catch(() => {})));
  if (dir) await rm(dir, { recursive: true, force: true });
});

const config = (buildId: string, output: string, endpoint: { baseUrl: string } | { baseUrls: string[] }): BuildConfigInput => ({
  buildId,
  seed: 4,
  output,
  sources: [{ type: 'cc3m', uri: path.join(dir, 'cc3m') }],
  maxSamples: 6 * SHARDS,
  shardSize: 6,
  sliceSize: 2,
  retry: { maximumAttempts: 20, initialIntervalSeconds: 0.5, maximumIntervalSeconds: 1 },
  models: { default: { model: 'mmif-sim-vlm', ...endpoint } },
});

/** The build's data files (path -> sha256), manifests aside (they name the build's endpoint and usage). */
async function dataFiles(output: string, buildId: string): Promise<Map<string, string>> {
  const sums = await assertCommittedShardsIntact(new LocalStore(output), buildId, SHARDS);
  return new Map([...sums].filter(([file]) => !file.startsWith('manifests/')));
}

test('three replicas, one killed mid-build: no sample lost, records byte-identical to one endpoint, shares in status, report and card', async () => {
  const refOutput = path.join(dir, 'one-endpoint');
  const ref = (await stack.client.workflow.execute('buildDataset', {
    taskQueue: stack.taskQueue,
    workflowId: 'replicas',
    args: [config('replicas', refOutput, { baseUrl: stack.simulator.url })],
  })) as BuildReport;
  assert.equal(ref.shards.committed, SHARDS);
  assert.equal(ref.replicas, undefined, 'one endpoint: no replica shares');

  const output = path.join(dir, 'three-replicas');
  const handle = await stack.client.workflow.start('buildDataset', {
    taskQueue: stack.taskQueue,
    workflowId: 'replicas',
    args: [config('replicas', output, { baseUrls: replicas.map((r) => r.url) })],
  });
  // Killed once it has served some of its images' requests and is serving more.
  let victim: SimulatorHandle | undefined;
  await eventually(() => (victim = replicas.find((r) => r.stats().completed >= 8 && r.stats().inFlight > 0)) !== undefined, 120_000, 'a replica busy mid-build');
  await victim!.close();
  const report = (await handle.result()) as BuildReport;

  assert.deepEqual(report.shards, { planned: SHARDS, committed: SHARDS, failed: 0 });
  assert.deepEqual(await dataFiles(output, 'replicas'), await dataFiles(refOutput, 'replicas'), 'records byte-identical to the one-endpoint build');

  const shares = new Map(report.replicas!.map((s) => [s.replica, s]));
  assert.deepEqual([...shares.keys()].sort(), replicas.map((r) => endpointLabel(r.url)).sort(), 'every replica listed');
  const killed = shares.get(endpointLabel(victim!.url))!;
  assert.ok(killed.ejections >= 1, 'the killed replica was taken out');
  assert.ok(report.replicas!.reduce((n, s) => n + s.rerouted, 0) > 0, 'its samples re-routed');
  for (const r of replicas) if (r !== victim) assert.ok(shares.get(endpointLabel(r.url))!.routed > 0);
  assert.ok(Math.abs(report.replicas!.reduce((n, s) => n + s.share, 0) - 1) < 1e-9);

  const status = (await mmif(stack, 'status', 'replicas')).stdout;
  const line = /^replicas: (.*)$/m.exec(status)?.[1] ?? '';
  for (const r of replicas) assert.ok(line.includes(endpointLabel(r.url)), `status names ${r.url}: ${status}`);
  assert.match(line, new RegExp(`${endpointLabel(victim!.url).replace(/[.:/]/g, '\\$&')} [\\d.]+% \\(\\d+ routed[^;]*taken out \\d+x`));

  const card = await readFile(path.join(output, buildLayout('replicas').datasetCard), 'utf8');
  assert.match(card, /^- Replicas \(share of requests, image-affine routing\): .*taken out \dx/m);
});
