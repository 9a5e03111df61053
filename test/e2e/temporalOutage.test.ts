/**
 * `mmif build --wait` follows a build through a Temporal restart to its real end: the server is
 * SIGKILLed while shards run and started again on the same port and database; the worker (a process
 * of its own, as in production) and the CLI reconnect, each says so in two lines of its own (the
 * worker's instead of the SDK's per-retry warnings), and the CLI exits 0 with the completed build
 * (issue 34: it exited 1 with "Failed to describe workflow" about 20 s into the outage while the build
 * went on; the worker printed dozens of `gRPC call ... retried` warnings a second).
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { seen } from '../harness/outputSeen.js';
import { SAMPLES_DIR } from '../../cli/quickstartConfig.js';
import { freePort, startTemporalDevServer, stopProcess, type DevServer } from '../../local/temporalDevServer.js';
import { startSimulator, type SimulatorHandle } from '../../simulator/server.js';
import { startWorkerProcess } from '../harness/mmifCli.js';

const CLI = fileURLToPath(new URL('../../cli/mmif.ts', import.meta.url));
const TASK_QUEUE = 'mmif-outage-build';

let dir: string | undefined;
let server: DevServer | undefined;
let simulator: SimulatorHandle | undefined;
let worker: ChildProcess | undefined;
let cli: ChildProcess | undefined;

after(async () => {
  cli?.kill('SIGKILL');
  if (worker) await stopProcess(worker);
  await server?.stop();
  await simulator?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('build --wait: Temporal killed and restarted mid-build; the CLI reconnects and exits 0 with the completed build', async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-outage-build-'));
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  const dbFile = path.join(dir, 'temporal.db');
  server = await startTemporalDevServer({ port, dbFile });
  // Slow replies, so shards are still running when the server goes.
  simulator = await startSimulator({ seed: 3, faults: { latencyMs: 400 } });
  worker = await startWorkerProcess({ temporalAddress: address, taskQueue: TASK_QUEUE, baseUrl: simulator.url });
  const config = {
    buildId: 'outage-build',
    seed: 3,
    output: path.join(dir, 'out'),
    sources: [{ type: 'cc3m', uri: SAMPLES_DIR, layout: 'files' }],
    maxSamples: 8,
    shardSize: 4,
    sliceSize: 4,
    models: { default: { model: 'mmif-sim-vlm' } },
  };
  const file = path.join(dir, 'build.json');
  await writeFile(file, JSON.stringify(config));
  cli = spawn(process.execPath, ['--import', 'tsx', CLI, 'build', '--config', file, '--wait'], {
    env: { ...process.env, TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: 'default', MMIF_TASK_QUEUE: TASK_QUEUE, OPENAI_BASE_URL: simulator.url },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  cli.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  cli.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exit = new Promise<number | null>((resolve) => cli!.once('exit', (code) => resolve(code)));

  let workerOut = '';
  worker.stdout!.on('data', (d: Buffer) => (workerOut += d.toString()));
  worker.stderr!.on('data', (d: Buffer) => (workerOut += d.toString()));
  await seen(cli, () => out, /\d+\/2 shards, [12] running/);
  const killed = new Promise((resolve) => server!.process.once('exit', resolve));
  server.process.kill('SIGKILL');
  await killed;
  await seen(cli, () => out, new RegExp(`lost Temporal at ${address} \\(`));
  server = await startTemporalDevServer({ port, dbFile });
  await seen(cli, () => out, new RegExp(`reconnected to Temporal at ${address} after \\d+ s`));
  assert.equal(await exit, 0, out.slice(-3000));
  assert.match(out, /build outage-build: COMPLETED/);
  assert.doesNotMatch(out, /Failed to describe workflow/);
  // The worker's own lines: one when it lost the server, one when it was back; none of the SDK's retries.
  const lost = workerOut.split('\n').filter((l) => l.startsWith(`lost Temporal at ${address} (`));
  assert.equal(lost.length, 1, workerOut.slice(-3000));
  assert.match(lost[0]!, /reconnecting, waiting up to 10 s between tries \(the worker's polls retry by themselves/);
  await seen(worker, () => workerOut, new RegExp(`reconnected to Temporal at ${address} after \\d+ s; the worker polls again`));
  assert.doesNotMatch(workerOut, /gRPC call \w+ retried/);
});
