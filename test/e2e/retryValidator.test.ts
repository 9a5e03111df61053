/**
 * The `retryFailedShards` update is refused once a build is finalizing: no shard runs again then, so
 * answering "retrying" would be a lie. The finalizing window is short in a real build; this worker's
 * finalizeBuild lingers a few seconds before doing the real work, so the test can aim at it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection, WorkflowUpdateFailedError } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import * as activities from '../../activities/index.js';
import { SAMPLES_DIR, SIMULATOR_MODEL } from '../../cli/quickstartConfig.js';
import { startTemporalDevServer, type DevServer } from '../../local/temporalDevServer.js';
import { startSimulator, type SimulatorHandle } from '../../simulator/server.js';
import { prebuiltWorkflowBundle } from '../../worker/bundleProcess.js';
import { progressQuery, retryFailedShardsUpdate } from '../../workflows/buildDataset.js';

const TASK_QUEUE = 'mmif-retry-validator';
let server: DevServer;
let simulator: SimulatorHandle;
let connection: Connection;
let nativeConnection: NativeConnection;
let worker: Worker;
let running: Promise<void>;
let dir: string;

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-retry-validator-'));
  const [dev, sim, bundle] = await Promise.all([startTemporalDevServer(), startSimulator(), prebuiltWorkflowBundle()]);
  server = dev;
  simulator = sim;
  process.env.OPENAI_BASE_URL = simulator.url;
  connection = await Connection.connect({ address: server.address });
  nativeConnection = await NativeConnection.connect({ address: server.address });
  worker = await Worker.create({
    connection: nativeConnection,
    taskQueue: TASK_QUEUE,
    workflowBundle: { codePath: bundle },
    activities: {
      ...activities,
      finalizeBuild: async (input: Parameters<typeof activities.finalizeBuild>[0]) => {
        await sleep(4_000);
        return activities.finalizeBuild(input);
      },
    },
  });
  running = worker.run();
});

after(async () => {
  worker?.shutdown();
  await running;
  await connection?.close();
  await nativeConnection?.close();
  await server?.stop();
  await simulator?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('retryFailedShards is refused while the build is finalizing, and the build still completes', async () => {
  const client = new Client({ connection });
  const buildId = 'finalizing-build';
  const handle = await client.workflow.start('buildDataset', {
    taskQueue: TASK_QUEUE,
    workflowId: buildId,
    args: [
      {
        buildId,
        seed: 7,
        output: path.join(dir, 'out'),
        sources: [{ type: 'cc3m', uri: SAMPLES_DIR, layout: 'files' }],
        maxSamples: 2,
        shardSize: 2,
        models: { default: { model: SIMULATOR_MODEL } },
      },
    ],
  });
  const deadline = Date.now() + 120_000;
  while ((await handle.query(progressQuery)).phase !== 'finalizing') {
    assert.ok(Date.now() < deadline, 'the build reaches its finalizing phase');
    await sleep(100);
  }
  await assert.rejects(handle.executeUpdate(retryFailedShardsUpdate), (err: unknown) => {
    assert.ok(err instanceof WorkflowUpdateFailedError, String(err));
    assert.match(String((err as Error & { cause?: Error }).cause?.message), /finalizing-build is finalizing: no shard can be retried in this run/);
    return true;
  });
  const report = await handle.result();
  assert.equal(report.shards.failed, 0);
  assert.equal(report.shards.committed, 1);
});
