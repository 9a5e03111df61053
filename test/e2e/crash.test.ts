/**
 * Kill a worker mid-shard. Workers run as separate `mmif worker` processes; one is SIGKILLed while
 * activities are in flight, a fresh one takes over, and the dataset must come out exactly as an
 * uninterrupted run with the same seed makes it: the planned sample ids, each once, byte-identical.
 * Its cost is never under-reported: calls the killed worker paid for but never recorded are counted
 * from the cache entries they left, checked against the requests the simulator answered. Requests a
 * killed worker sent ahead for a later stage (pipeline/run/sentAhead.ts) and never saw answered are
 * counted once as lost, and their requests made again once as paid: the rejected answer's endpoint
 * (its own simulator, holding every reply until the kill) received exactly what the report counts.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { BuildConfigInput } from '../../config/buildConfig.js';
import type { InstructRecord } from '../../output/contracts/records.js';
import type { SourceSample } from '../../domain/sample.js';
import { STAGE_NAMES } from '../../config/stages.js';
import type { StageState } from '../../pipeline/run/stageState.js';
import { startTemporalDevServer, stopProcess, type DevServer } from '../../local/temporalDevServer.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { startSimulator, type SimulatorHandle } from '../../simulator/server.js';
import { getJson } from '../../storage/objectStore.js';
import { LocalStore } from '../../storage/localStore.js';
import { writeCc3m } from '../fixtures/cc3m.js';
import { assertCommittedShardsIntact, eventually } from '../harness/datasetChecks.js';
import { startWorkerProcess } from '../harness/mmifCli.js';

const TASK_QUEUE = 'mmif-crash';

let server: DevServer;
let simulator: SimulatorHandle;
/** Serves the rejected answers only, holding every reply (10 minutes) until the test lets go. */
let held: SimulatorHandle;
let connection: Connection;
let client: Client;
let dir: string;
const workers: ChildProcess[] = [];

before(async () => {
  [server, simulator, held] = await Promise.all([
    startTemporalDevServer(),
    startSimulator({ seed: 9, faults: { latencyMs: 120 } }),
    startSimulator({ seed: 9, faults: { latencyMs: 600_000 } }),
  ]);
  connection = await Connection.connect({ address: server.address });
  client = new Client({ connection });
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-crash-'));
  await writeCc3m(new LocalStore(path.join(dir, 'cc3m')), 'files', { perShard: 4, shards: 2 });
});

after(async () => {
  for (const w of workers) await stopProcess(w);
  await connection?.close();
  await server?.stop();
  await Promise.all([simulator?.close(), held?.close()]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** A worker in its own process, as production runs it. */
async function startWorker(taskQueue = TASK_QUEUE): Promise<ChildProcess> {
  const child = await startWorkerProcess({ temporalAddress: server.address, taskQueue, baseUrl: simulator.url });
  workers.push(child);
  return child;
}

const config = (buildId: string, output: string): BuildConfigInput => ({
  buildId,
  seed: 12,
  output,
  sources: [{ type: 'cc3m', uri: path.join(dir, 'cc3m') }],
  maxSamples: 8,
  shardSize: 4,
  sliceSize: 2,
  retry: { maximumAttempts: 20, initialIntervalSeconds: 0.5, maximumIntervalSeconds: 1, heartbeatTimeoutSeconds: 3 },
  models: { default: { model: 'mmif-sim-vlm' } },
  // A price for the simulated model, so cost figures show. The lease desk counts the killed worker's
  // slots for a lease term plus its attempt timeout (llm/concurrencyLeases.ts): at the default 120 s
  // the new worker waited that long for the endpoint; the simulator answers in 120 ms.
  llm: { timeoutMs: 10_000, prices: { 'mmif-sim-vlm': { inputPerMTok: 2, outputPerMTok: 8, batchDiscount: 0.5 } } },
});

/** Requests a build paid for (not cache hits), and its estimated cost, from its report. */
const paid = (report: BuildReport) => ({
  requests: Object.values(report.usage).reduce((n, u) => n + u.requests - u.cachedRequests, 0),
  costUsd: Object.values(report.usage).reduce((n, u) => n + u.costUsd, 0),
});

/** Data files by path -> sha256, and the record ids of the whole build. */
async function dataset(output: string, buildId: string) {
  const store = new LocalStore(output);
  const sums = await assertCommittedShardsIntact(store, buildId, 2);
  const data = new Map([...sums].filter(([file]) => !file.startsWith('manifests/')));
  const ids: string[] = [];
  const planned: string[] = [];
  for (const shard of [0, 1]) {
    const layout = buildLayout(buildId);
    planned.push(...(await getJson<SourceSample[]>(store, layout.shardPlan(shard)))!.map((s) => s.sampleId));
    const body = (await store.get(layout.instructJsonl(shard)))!.toString();
    ids.push(
      ...body
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as InstructRecord).id),
    );
    const rejects = (await store.get(layout.rejects(shard)))!.toString();
    ids.push(
      ...rejects
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { id: string; kind: string })
        .filter((r) => r.kind === 'sample')
        .map((r) => r.id),
    );
  }
  return { data, ids: ids.sort(), planned: planned.sort() };
}

test('a worker SIGKILLed mid-shard is replaced and the dataset is byte-identical to an uninterrupted run', async () => {
  const first = await startWorker();

  // The reference: the same build, uninterrupted, into its own output (and so its own model cache).
  const refOutput = path.join(dir, 'reference');
  const refStart = simulator.stats().completed;
  const ref = (await client.workflow.execute('buildDataset', { taskQueue: TASK_QUEUE, workflowId: 'crash', args: [config('crash', refOutput)] })) as BuildReport;
  assert.equal(ref.shards.committed, 2);
  assert.equal(paid(ref).requests, simulator.stats().completed - refStart, 'uninterrupted: every answered request counted');

  const output = path.join(dir, 'crashed');
  const handle = await client.workflow.start('buildDataset', { taskQueue: TASK_QUEUE, workflowId: 'crash', args: [config('crash', output)] });
  const requests = simulator.stats().requests;
  const answeredBefore = simulator.stats().completed;
  await eventually(() => simulator.stats().requests > requests + 8 && simulator.stats().inFlight > 0, 60_000, 'activities in flight');
  const inFlightAtKill = simulator.stats().inFlight;
  first.kill('SIGKILL');
  await new Promise((r) => first.once('exit', r));
  await startWorker();

  const report = (await handle.result()) as BuildReport;
  assert.deepEqual(report.shards, { planned: 2, committed: 2, failed: 0 });
  const crashed = await dataset(output, 'crash');
  const reference = await dataset(refOutput, 'crash');
  assert.deepEqual(crashed.ids, crashed.planned, 'every planned sample exactly once (a record or a rejection)');
  assert.equal(new Set(crashed.ids).size, 8);
  assert.deepEqual(crashed.data, reference.data, 'data files byte-identical to the uninterrupted run');

  // Cost after a crash: what the endpoint answered, against what the report counts.
  const answered = simulator.stats().completed - answeredBefore;
  const counted = paid(report);
  console.log(
    `crashed build: ${answered} requests answered by the endpoint, ${counted.requests} counted ($${counted.costUsd.toFixed(6)}); ` +
      `uninterrupted: ${paid(ref).requests} ($${paid(ref).costUsd.toFixed(6)}); ${inFlightAtKill} in flight at the kill`,
  );
  // Calls the killed worker paid for are counted from the cache entries they left, and requests it
  // sent but never saw answered from the marks written before sending: the report never counts
  // fewer calls than the endpoint answered, nor fewer than the uninterrupted run ...
  assert.ok(counted.requests >= answered, `${answered} answered, ${counted.requests} counted`);
  assert.ok(counted.requests >= paid(ref).requests && counted.costUsd >= paid(ref).costUsd - 1e-9, 'no less than the uninterrupted run');
  // ... and overcounts at most the requests the killed worker had in flight, which the endpoint may
  // have dropped unanswered: no more than the endpoint's concurrency cap (16 by default).
  assert.ok(counted.requests - answered <= 16, `${answered} answered, ${counted.requests} counted, ${inFlightAtKill} in flight at the endpoint`);
});

const BUILD = 'sent-ahead-crash';

test('a rejected answer sent ahead by a SIGKILLed worker is counted once as lost, and its request made again once as paid', async () => {
  // Its own task queue: the first test's workers take none of this build's activities.
  const queue = `${TASK_QUEUE}-ahead`;
  const first = await startWorker(queue);
  const output = path.join(dir, 'sent-ahead');
  const crashConfig = config(BUILD, output);
  const input: BuildConfigInput = {
    ...crashConfig,
    maxSamples: 4,
    models: { ...crashConfig.models, rejected: { model: 'mmif-sim-vlm', baseUrl: held.url } },
    // No pre-flight: its request to the held endpoint would be held too. The kill follows the first
    // held request within a poll, long before the first worker's attempt times out (10 s).
    llm: { ...crashConfig.llm, preflight: false },
  };
  const handle = await client.workflow.start('buildDataset', { taskQueue: queue, workflowId: BUILD, args: [input] });

  // A rejected answer is sent only beside its chosen answer: one held there means one sent ahead, in flight.
  await eventually(() => held.stats().inFlight > 0, 120_000, 'a rejected answer sent ahead and held');
  first.kill('SIGKILL');
  await new Promise((r) => first.once('exit', r));
  // Every request the held endpoint received so far was in flight at the kill: none was answered.
  const lostAtKill = held.stats().requests;
  assert.equal(held.stats().completed, 0);
  held.setFaults({ latencyMs: 20 });
  await startWorker(queue);

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
