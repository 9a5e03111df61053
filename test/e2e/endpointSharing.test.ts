/**
 * Endpoint limits across workers: the live pollers a real Temporal dev server reports for a task
 * queue, and the share every worker then admits. Two workers with their own identities (as two
 * processes have: pid@host) poll one queue; each counts both and admits half of each endpoint's cap.
 * (One process may run only one worker per queue and task type, so here one polls workflow tasks
 * and the other activity tasks; the count covers both types.)
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { NativeConnection, Worker } from '@temporalio/worker';
import * as activities from '../../activities/index.js';
import { resolveEndpoint } from '../../llm/endpoint.js';
import { limiterFor, shareEndpointsAmong } from '../../llm/limiter.js';
import { startTemporalDevServer, type DevServer } from '../../local/temporalDevServer.js';
import { bundleWorkflows } from '../../worker/createWorker.js';
import { LIVE_MS, livePollers, RECOUNT_MS, shareEndpointLimits } from '../../worker/endpointSharing.js';

let server: DevServer;
let connection: NativeConnection;
const workers: Worker[] = [];
const runs: Promise<void>[] = [];
const TASK_QUEUE = 'mmif-sharing';

before(async () => {
  server = await startTemporalDevServer();
  connection = await NativeConnection.connect({ address: server.address });
  const workflowBundle = await bundleWorkflows();
  const common = { connection, namespace: 'default', taskQueue: TASK_QUEUE };
  workers.push(await Worker.create({ ...common, identity: 'worker-a@host', workflowBundle }));
  workers.push(await Worker.create({ ...common, identity: 'worker-b@host', activities }));
  for (const worker of workers) runs.push(worker.run());
});

after(async () => {
  for (const worker of workers) worker.shutdown();
  await Promise.allSettled(runs);
  shareEndpointsAmong(1);
  await connection?.close();
  await server?.stop();
});

test('counts the workers polling a task queue, and only those seen within LIVE_MS', async () => {
  let live = new Set<string>();
  for (let i = 0; i < 50 && live.size < 2; i++, await sleep(100)) live = await livePollers(connection.workflowService, 'default', TASK_QUEUE);
  assert.deepEqual([...live].sort(), ['worker-a@host', 'worker-b@host']);
  assert.deepEqual([...(await livePollers(connection.workflowService, 'default', 'mmif-no-such-queue'))], []);
  const later = await livePollers(connection.workflowService, 'default', TASK_QUEUE, Date.now() + LIVE_MS + 120_000);
  assert.equal(later.size, 0, 'a worker that stopped polling drops out of the count');
});

test('each worker admits its share of the endpoint: 2 live workers, half the cap and rates', async () => {
  const endpoint = resolveEndpoint({ model: 'sharing-model', baseUrl: 'http://127.0.0.1:9', apiKeyEnv: 'MMIF_TEST_UNSET_KEY', concurrency: 64, batch: false });
  const limiter = limiterFor(endpoint, { concurrency: 64, requestsPerMinute: 1_200 });
  assert.equal(limiter.snapshot().workers, 1);
  let stopped = false;
  shareEndpointLimits(connection, 'default', TASK_QUEUE, () => stopped);
  for (let i = 0; i < 50 && limiter.snapshot().workers !== 2; i++) await sleep(100);
  stopped = true;
  assert.deepEqual(
    (({ workers, concurrency, requestsPerMinute }) => ({ workers, concurrency, requestsPerMinute }))(limiter.snapshot()),
    { workers: 2, concurrency: 32, requestsPerMinute: 600 },
  );
  assert.ok(RECOUNT_MS <= 10_000, 'workers joining or leaving are noticed within seconds');
});
