/**
 * A fleet on separate hosts: three `mmif worker` processes, each in a network namespace of its own
 * (test/harness/hostNetwork.ts) with a private working directory, reach Temporal, the object store
 * (versitygw) and the simulator only at the services' bridge address, and Prometheus scrapes each
 * worker at its own host's address. A build whose sources and output are on S3 completes with one
 * worker SIGKILLed mid-build, and its data files are byte-identical to a one-worker build of the same
 * seed: no part of a build relies on a disk or a loopback that workers share. Where the machine cannot
 * make namespaces (not root, no iproute2), the test skips saying why.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { BuildConfigInput } from '../../config/buildConfig.js';
import type { SourceSample } from '../../domain/sample.js';
import { startTemporalDevServer, stopProcess, type DevServer } from '../../local/temporalDevServer.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import { startSimulator, type SimulatorHandle } from '../../simulator/server.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { getJson } from '../../storage/objectStore.js';
import { openStore } from '../../storage/openStore.js';
import type { S3Options } from '../../storage/s3Store.js';
import { writeCc3m } from '../fixtures/cc3m.js';
import { assertCommittedShardsIntact, eventually } from '../harness/datasetChecks.js';
import { createHostNetwork, HostNetworkUnavailable, type HostNetwork } from '../harness/hostNetwork.js';
import { startWorkerProcess } from '../harness/mmifCli.js';
import { startPrometheus, type Prometheus } from '../harness/prometheus.js';
import { startS3Server, useS3Env, type S3Server } from '../harness/s3Server.js';

const TASK_QUEUE = 'mmif-fleet';
const HOSTS = 3;
const SHARDS = 6;
const METRICS_PORT = 9464;

let unavailable: string | undefined;
let network: HostNetwork | undefined;
let server: DevServer;
let temporalAddress: string;
let simulator: SimulatorHandle;
let s3: S3Server;
let s3Options: S3Options;
let prometheus: Prometheus;
let connection: Connection;
let client: Client;
let dir: string;
const workers = new Map<number, ChildProcess>();

before(async () => {
  try {
    network = await createHostNetwork(HOSTS);
  } catch (err) {
    if (!(err instanceof HostNetworkUnavailable)) throw err;
    unavailable = err.message;
    return;
  }
  const at = network.servicesAddress;
  // The dev server dials its own internal services at 127.0.0.1, so it binds every address; the
  // hosts still reach it only at the bridge's (their loopback is their own).
  [server, simulator, s3] = await Promise.all([
    startTemporalDevServer({ ip: '0.0.0.0' }),
    startSimulator({ host: at, seed: 21, faults: { latencyMs: 120 } }),
    startS3Server({ host: at }),
  ]);
  s3Options = useS3Env(s3);
  await writeCc3m(openStore(`s3://${s3.bucket}/cc3m`, s3Options), 'webdataset', { perShard: SHARDS * 2, shards: 1 });
  prometheus = await startPrometheus(network.hosts.map((h) => `${h.address}:${METRICS_PORT}`));
  temporalAddress = `${at}:${server.address.split(':')[1]}`;
  connection = await Connection.connect({ address: temporalAddress });
  client = new Client({ connection });
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-fleet-'));
});

after(async () => {
  for (const w of workers.values()) await stopProcess(w);
  await connection?.close();
  await prometheus?.stop();
  await Promise.all([server?.stop(), simulator?.close(), s3?.stop()]);
  await network?.teardown();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The private working directory of host `i` (where its worker runs, with its HOME); its TMPDIR is beside it. */
const workDir = (i: number) => path.join(dir, `host-${i}`, 'work');

/** `mmif worker` on host `i`: in its namespace, its own directories, serving metrics at its own address. */
async function startWorker(i: number): Promise<ChildProcess> {
  const host = network!.hosts[i]!;
  const temp = path.join(dir, `host-${i}`, 'tmp');
  await mkdir(workDir(i), { recursive: true });
  await mkdir(temp, { recursive: true });
  const child = await startWorkerProcess(
    { temporalAddress, taskQueue: TASK_QUEUE, baseUrl: simulator.url, more: { HOME: workDir(i), TMPDIR: temp } },
    ['--metrics', `${host.address}:${METRICS_PORT}`],
    { netns: host.netns, cwd: workDir(i) },
  );
  workers.set(i, child);
  return child;
}

const config = (output: string): BuildConfigInput => ({
  buildId: 'fleet',
  seed: 8,
  output,
  s3: s3Options,
  sources: [{ type: 'cc3m', uri: `s3://${s3.bucket}/cc3m` }],
  maxSamples: SHARDS * 2,
  shardSize: 2,
  sliceSize: 1,
  retry: { maximumAttempts: 20, initialIntervalSeconds: 0.5, maximumIntervalSeconds: 1, heartbeatTimeoutSeconds: 3 },
  models: { default: { model: 'mmif-sim-vlm' } },
});

/** A build's data files (path -> sha256, manifests aside) and the sample ids its shards planned. */
async function dataset(output: string) {
  const store = openStore(output, s3Options);
  const sums = await assertCommittedShardsIntact(store, 'fleet', SHARDS);
  const planned: string[] = [];
  for (let shard = 0; shard < SHARDS; shard++) planned.push(...(await getJson<SourceSample[]>(store, buildLayout('fleet').shardPlan(shard)))!.map((s) => s.sampleId));
  return { data: new Map([...sums].filter(([file]) => !file.startsWith('manifests/'))), planned: planned.sort() };
}

test('three workers on separate hosts build from S3 to S3, one killed mid-build, byte-identical to one worker', async (t) => {
  if (unavailable) return t.skip(unavailable);
  await startWorker(0);
  const reference = (await client.workflow.execute('buildDataset', { taskQueue: TASK_QUEUE, workflowId: 'fleet', args: [config(`s3://${s3.bucket}/reference`)] })) as BuildReport;
  assert.equal(reference.shards.committed, SHARDS);

  await Promise.all([startWorker(1), startWorker(2)]);
  const handle = await client.workflow.start('buildDataset', { taskQueue: TASK_QUEUE, workflowId: 'fleet', args: [config(`s3://${s3.bucket}/fleet`)] });
  // Host 2's worker dies once Prometheus, scraping it at its host's address, has seen it send model
  // requests of this build (it sent none before).
  const targets = network!.hosts.map((h) => `${h.address}:${METRICS_PORT}`);
  const sentBy = async (target: string) => (await prometheus.query(`sum(mmif_requests_total{instance="${target}"})`))[0]?.value ?? 0;
  await eventually(async () => (await sentBy(targets[1]!)) >= 3, 120_000, 'Prometheus seeing the worker on host 2 send model requests');
  const victim = workers.get(1)!;
  victim.kill('SIGKILL');
  await new Promise((r) => victim.once('exit', r));
  workers.delete(1);

  const report = (await handle.result()) as BuildReport;
  assert.deepEqual(report.shards, { planned: SHARDS, committed: SHARDS, failed: 0 });
  const fleet = await dataset(`s3://${s3.bucket}/fleet`);
  const alone = await dataset(`s3://${s3.bucket}/reference`);
  assert.deepEqual(fleet.planned, alone.planned);
  assert.equal(fleet.data.size, alone.data.size);
  assert.deepEqual(fleet.data, alone.data, 'data files byte-identical to the one-worker build');

  // Prometheus scraped each worker at its own host's address; the killed one is down, the others up.
  await eventually(async () => (await prometheus.query(`up{instance="${targets[1]}"}`))[0]?.value === 0, 60_000, 'Prometheus seeing host 2 down');
  assert.ok((await sentBy(targets[2]!)) > 0, 'the worker on host 3 took part');
  const sent = await prometheus.query('sum by (instance) (max_over_time(mmif_requests_total[30m]))');
  assert.deepEqual(sent.map((s) => s.metric.instance).sort(), [...targets].sort());
  for (const s of sent) assert.ok(s.value > 0, `${s.metric.instance} sent requests`);
  const up = await prometheus.query('up');
  assert.deepEqual(Object.fromEntries(up.map((s) => [s.metric.instance, s.value])), { [targets[0]!]: 1, [targets[1]!]: 0, [targets[2]!]: 1 });

  // Nothing was written to a host's working directory: every byte of the build went through S3.
  for (let i = 0; i < HOSTS; i++) assert.deepEqual(await readdir(workDir(i)), [], `host ${i + 1}'s working directory`);
});
