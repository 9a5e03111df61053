/**
 * A request sent ahead (pipeline/run/sentAhead.ts: the DPO rejected answer goes out beside the chosen
 * answer, ADR 0074) by a worker that is SIGKILLed before its reply arrives. Providers bill such a
 * request, so the build must count it exactly once as lost in flight, and the request made again by
 * the worker that takes over exactly once as paid: the report's usage for the rejected answer's
 * endpoint equals the requests that endpoint received. The rejected role has its own simulator,
 * holding every reply until the kill, so the requests in flight at the kill are known exactly.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { BuildConfigInput } from '../../config/buildConfig.js';
import { STAGE_NAMES } from '../../config/stages.js';
import type { SourceSample } from '../../domain/sample.js';
import { startTemporalDevServer, stopProcess, type DevServer } from '../../local/temporalDevServer.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import type { StageState } from '../../pipeline/run/stageState.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { startSimulator, type SimulatorHandle } from '../../simulator/server.js';
import { getJson } from '../../storage/objectStore.js';
import { LocalStore } from '../../storage/localStore.js';
import { writeCc3m } from '../fixtures/cc3m.js';
import { eventually } from '../harness/datasetChecks.js';
import { startWorkerProcess } from '../harness/mmifCli.js';

const TASK_QUEUE = 'mmif-sent-ahead-crash';
const BUILD = 'sent-ahead-crash';

let server: DevServer;
let simulator: SimulatorHandle;
/** Serves the rejected role only: holds every reply (10 minutes) until the worker is killed. */
let held: SimulatorHandle;
let connection: Connection;
let client: Client;
let dir: string;
const workers: ChildProcess[] = [];

before(async () => {
  [server, simulator, held] = await Promise.all([
    startTemporalDevServer(),
    startSimulator({ seed: 9, faults: { latencyMs: 20 } }),
    startSimulator({ seed: 9, faults: { latencyMs: 600_000 } }),
  ]);
  connection = await Connection.connect({ address: server.address });
  client = new Client({ connection });
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-sent-ahead-'));
  await writeCc3m(new LocalStore(path.join(dir, 'cc3m')), 'files', { perShard: 4, shards: 1 });
});

after(async () => {
  for (const w of workers) await stopProcess(w);
  await connection?.close();
  await server?.stop();
  await Promise.all([simulator?.close(), held?.close()]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function startWorker(): Promise<ChildProcess> {
  const child = await startWorkerProcess({ temporalAddress: server.address, taskQueue: TASK_QUEUE, baseUrl: simulator.url });
  workers.push(child);
  return child;
}

test('a rejected answer sent ahead by a SIGKILLed worker is counted once as lost, and its request made again once as paid', async () => {
  const first = await startWorker();
  const output = path.join(dir, 'out');
  const config: BuildConfigInput = {
    buildId: BUILD,
    seed: 12,
    output,
    sources: [{ type: 'cc3m', uri: path.join(dir, 'cc3m') }],
    maxSamples: 4,
    shardSize: 4,
    sliceSize: 2,
    retry: { maximumAttempts: 20, initialIntervalSeconds: 0.5, maximumIntervalSeconds: 1, heartbeatTimeoutSeconds: 3 },
    models: { default: { model: 'mmif-sim-vlm' }, rejected: { model: 'mmif-sim-vlm', baseUrl: held.url } },
    // Longer than the test waits for the kill: a held request is never timed out and sent again by the
    // first worker. No pre-flight: its request to the held endpoint would be held too.
    llm: { preflight: false, timeoutMs: 120_000, prices: { 'mmif-sim-vlm': { inputPerMTok: 2, outputPerMTok: 8, batchDiscount: 0.5 } } },
  };
  const handle = await client.workflow.start('buildDataset', { taskQueue: TASK_QUEUE, workflowId: BUILD, args: [config] });

  // A rejected answer is sent only beside its chosen answer: one held there means one sent ahead, in flight.
  await eventually(() => held.stats().inFlight > 0, 120_000, 'a rejected answer sent ahead and held');
  first.kill('SIGKILL');
  await new Promise((r) => first.once('exit', r));
  // Every request the held endpoint received so far was in flight at the kill: none was answered.
  const lostAtKill = held.stats().requests;
  assert.equal(held.stats().completed, 0);
  held.setFaults({ latencyMs: 20 });
  await startWorker();

  const report = (await handle.result()) as BuildReport;
  assert.deepEqual(report.shards, { planned: 1, committed: 1, failed: 0 });

  const usage = report.usage.rejected!;
  const received = held.stats().requests;
  assert.ok(received > lostAtKill, 'the worker that took over made the lost requests again');
  assert.equal(usage.requests - usage.cachedRequests, received, `the rejected answer's endpoint received ${received} requests (${lostAtKill} lost at the kill)`);

  // In the samples' stage states: each request lost at the kill once as lost in flight, none twice.
  const store = new LocalStore(output);
  const layout = buildLayout(BUILD);
  const samples = (await getJson<SourceSample[]>(store, layout.shardPlan(0)))!;
  let lost = 0;
  for (const { sampleId } of samples) {
    for (const stage of STAGE_NAMES) {
      const state = await getJson<StageState>(store, layout.stageState(sampleId, stage));
      lost += state?.calls.filter((c) => c.stage === 'rejected' && c.lostInFlight).length ?? 0;
    }
  }
  assert.equal(lost, lostAtKill, 'each request lost at the kill counted once as lost in flight');
});
