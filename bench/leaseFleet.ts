// A fleet of 16 and 32 workers leasing one endpoint's concurrency cap through the lease desk
// (workflows/endpointLeases.ts). Each worker is a process doing only what a worker does with an
// endpoint: its limiter admits requests to the simulator at the grant it leases
// (worker/endpointSharing.ts, the code `mmif worker` runs); the desk runs on one real worker. Demand:
// each process runs 2C/N lanes in busy spells (5-15 s) with idle gaps (1-3 s), about 1.7C together.
// Measured over the steady state: requests/s against C / latency, 429s, lease reports sent and failed,
// terms ended unanswered, time to fair share, and where the cap went (in flight, granted but unused,
// not granted). Figures: bench/notes/2026-11-25-the-lease-desk-at-16-and-32-workers.md.
// Run:   npx tsx bench/leaseFleet.ts [--workers 16,32] [--seconds 90] [--concurrency 128] [--latency-ms 1000]
import { currentOnceSeen, versionedWorkerOptions, workerDeploymentVersion } from '../worker/deploymentVersion.js';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { resolveEndpoint } from '../llm/endpoint.js';
import { limiterFor, shareEndpointsAmong } from '../llm/limiter.js';
import { startTemporalDevServer } from '../local/temporalDevServer.js';
import { bundleWorkflows } from '../worker/bundleProcess.js';
import { leaseEndpointConcurrency, leaseReportFailures, leaseReportsSent, leasesReleased, leaseTermsEnded } from '../worker/endpointSharing.js';
import { fmt, loadAverage, pollSimulator, quantile, resetSim, startNodeProcess, startSimulatorProcess, steadyState, table, type Proc } from './harness.js';

const { values } = parseArgs({
  options: {
    workers: { type: 'string', default: '16,32' },
    seconds: { type: 'string', default: '90' },
    concurrency: { type: 'string', default: '128' },
    'latency-ms': { type: 'string', default: '1000' },
    role: { type: 'string' },
  },
});
const SELF = fileURLToPath(import.meta.url);
const TASK_QUEUE = 'mmif-lease-fleet';
const CAP = Number(values.concurrency);
const LATENCY_MS = Number(values['latency-ms']);
/** The reporters' samples of their limiters are summed over the fleet per this much wall-clock time. */
const BUCKET_MS = 100;

/** Each reporter's sums per bucket, as it prints them: [bucket, samples, grant, in flight, waiting, unused grant with requests waiting, unused grant with none]. */
type CapacitySums = number[][];

/**
 * Where the cap went between `from` and `to` (wall clock, ms), averaged over the buckets every
 * reporter sampled: each worker's figures are its means over the bucket, summed over the fleet.
 */
function whereTheCapWent(fleet: CapacitySums[], from: number, to: number) {
  const buckets = new Map<number, number[][]>();
  for (const sums of fleet)
    for (const row of sums) if (row[0]! * BUCKET_MS >= from && (row[0]! + 1) * BUCKET_MS <= to) (buckets.get(row[0]!) ?? buckets.set(row[0]!, []).get(row[0]!)!).push(row);
  const whole = [...buckets.values()].filter((rows) => rows.length === fleet.length);
  const mean = (pick: (rows: number[][]) => number) => whole.reduce((a, rows) => a + pick(rows), 0) / Math.max(1, whole.length);
  const sum = (rows: number[][], i: number) => rows.reduce((a, r) => a + r[i]! / r[1]!, 0);
  const inFlight = mean((rows) => sum(rows, 3));
  const idleWaiting = mean((rows) => sum(rows, 5));
  const idleUnwanted = mean((rows) => sum(rows, 6));
  return {
    buckets: whole.length,
    inFlight,
    idleWaiting,
    idleUnwanted,
    ungranted: CAP - inFlight - idleWaiting - idleUnwanted,
    wanted: mean((rows) => Math.min(CAP, sum(rows, 3) + sum(rows, 4))),
  };
}

if (values.role === 'desk') await desk();
else if (values.role === 'reporter') await reporter();
else await main();

/** The lease desk's worker: workflow tasks only (no activities), as any `mmif worker` of the queue would run it. */
async function desk(): Promise<void> {
  const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS! });
  const workflowBundle = await bundleWorkflows();
  const version = await workerDeploymentVersion(workflowBundle);
  const worker = await Worker.create({ connection, taskQueue: TASK_QUEUE, workflowBundle, ...versionedWorkerOptions(version) });
  currentOnceSeen(connection, 'default', version, worker);
  console.log('desk polling');
  await worker.run();
}

/**
 * One worker's endpoint side: its limiter, its lease reports and its requests. Prints, when told to
 * stop (SIGTERM), the lease reports it sent and the ones that failed.
 */
async function reporter(): Promise<void> {
  const workers = Number(process.env.FLEET_WORKERS);
  const endpoint = resolveEndpoint({ model: 'fleet-model', baseUrl: process.env.OPENAI_BASE_URL!, apiKeyEnv: 'MMIF_FLEET_UNSET_KEY', concurrency: CAP, batch: false });
  const limits = { concurrency: CAP, attemptTimeoutMs: 120_000 };
  const limiter = limiterFor(endpoint, limits);
  shareEndpointsAmong(workers); // where no lease is to be had: the 1/N split a worker counts from the pollers
  const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS! });
  let stopped = false;
  leaseEndpointConcurrency(new Client({ connection }), TASK_QUEUE, `fleet-${process.pid}`, () => stopped);
  const lanes = Math.ceil((2 * CAP) / workers);
  const fairShare = Math.floor(CAP / workers);
  let busyUntil = 0;
  let idleUntil = 0;
  /** Each busy spell's time from its start until the grant reached the fair share (undefined: not within the spell). */
  const converged: Array<number | undefined> = [];
  let spellStart: number | undefined;
  const spell = () => {
    const now = Date.now();
    if (now >= idleUntil && now >= busyUntil) {
      if (spellStart !== undefined) converged.push(undefined);
      spellStart = now;
      busyUntil = now + 5_000 + Math.random() * 10_000;
      idleUntil = busyUntil + 1_000 + Math.random() * 2_000;
    }
  };
  /** Per 100 ms of the wall clock: [bucket, samples, grant, in flight, waiting, unused grant with requests waiting, unused grant with none], sums over the samples. */
  const capacity = new Map<number, number[]>();
  const watch = setInterval(() => {
    const s = limiter.snapshot();
    if (spellStart !== undefined && s.concurrency >= fairShare) {
      converged.push(Date.now() - spellStart);
      spellStart = undefined;
    }
    if (!running) return;
    const bucket = Math.floor(Date.now() / BUCKET_MS);
    const sums = capacity.get(bucket) ?? [bucket, 0, 0, 0, 0, 0, 0];
    capacity.set(bucket, sums);
    const unused = Math.max(0, s.concurrency - s.inFlight);
    const sample = [1, s.concurrency, s.inFlight, s.queued, s.queued > 0 ? unused : 0, s.queued > 0 ? 0 : unused];
    for (const [i, n] of sample.entries()) sums[i + 1]! += n;
  }, 20);
  let running = false;
  const request = () =>
    limiter.run(
      100,
      async (ticket) => {
        const res = await fetch(`${endpoint.baseURL}/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${endpoint.apiKey}` },
          body: JSON.stringify({ model: endpoint.model, messages: [{ role: 'user', content: `Describe scene ${Math.random()}.` }], max_tokens: 64 }),
        });
        await res.arrayBuffer();
        if (res.status === 429) ticket.rateLimited(res.headers);
        else ticket.succeeded(res.headers, undefined);
      },
      undefined,
      limits,
    );
  const lane = async (): Promise<void> => {
    while (!stopped) {
      spell();
      const now = Date.now();
      if (now >= busyUntil) await new Promise((r) => setTimeout(r, idleUntil - now));
      else await request().catch(() => undefined);
    }
  };
  process.once('SIGTERM', () => {
    stopped = true;
    clearInterval(watch);
    console.log(JSON.stringify({ sent: leaseReportsSent(), failed: leaseReportFailures(), termsEnded: leaseTermsEnded(), converged, capacity: [...capacity.values()] }));
    // As `mmif worker` does: the desk hears the release before the process ends.
    void leasesReleased().then(() => process.exit(0));
  });
  // The lease loop's timers are unref'd (a worker's Temporal polling keeps its process alive): so does this, while it runs.
  const alive = setInterval(() => {}, 1000);
  // The fleet starts together once every reporter runs (SIGUSR2): on a busy host starting 32 takes minutes.
  const go = new Promise((started) => process.once('SIGUSR2', started));
  console.log('reporter ready');
  await go;
  running = true;
  await Promise.all(Array.from({ length: lanes }, lane));
  clearInterval(alive);
}

async function main(): Promise<void> {
  const server = await startTemporalDevServer();
  const env = { TEMPORAL_ADDRESS: server.address };
  const deskProc = await startNodeProcess(SELF, ['--role', 'desk'], env, 'desk polling', 180_000);
  const sim = await startSimulatorProcess({ latencyMs: LATENCY_MS, maxConcurrent: CAP, seed: 3 });
  const rows: Array<Array<string | number>> = [];
  try {
    for (const n of values.workers.split(',').map(Number)) {
      const procs: Array<Proc & { stdout: () => string }> = [];
      for (let i = 0; i < n; i++)
        procs.push(await startNodeProcess(SELF, ['--role', 'reporter'], { ...env, OPENAI_BASE_URL: sim.url, FLEET_WORKERS: String(n) }, 'reporter ready', 180_000));
      await resetSim(sim);
      for (const p of procs) p.child.kill('SIGUSR2');
      console.log(`${n} reporters running`);
      const pollStart = Date.now();
      const poll = pollSimulator(sim, [deskProc.pid]);
      await new Promise((r) => setTimeout(r, Number(values.seconds) * 1000));
      const ticks = await poll.stop();
      console.log(`${n} reporters stopping`);
      const reports = await Promise.all(
        procs.map(async (p) => {
          if (p.child.exitCode !== null) throw new Error(`a reporter exited early (${p.child.exitCode}): ${p.stderr().trim()}`);
          const exited = new Promise((r) => p.child.once('exit', r));
          p.child.kill('SIGTERM');
          await exited;
          return JSON.parse(p.stdout().trim().split('\n').at(-1)!) as {
            sent: number;
            failed: Record<string, number>;
            termsEnded: number;
            converged: Array<number | null>;
            capacity: CapacitySums;
          };
        }),
      );
      const steady = steadyState(ticks, cpus().length);
      const cap = whereTheCapWent(
        reports.map((r) => r.capacity),
        pollStart + steady.from,
        pollStart + steady.to,
      );
      const pct = (n: number) => `${fmt((100 * n) / CAP)}%`;
      const spells = reports.flatMap((r) => r.converged);
      const times = spells.filter((t): t is number => t !== null);
      const spellQuantile = (q: number) => (times.length === 0 ? '-' : `${fmt(quantile(times, q) / 1000, 2)} s`);
      const last = ticks.at(-1)!;
      const limit = CAP / (LATENCY_MS / 1000);
      rows.push([
        n,
        Math.ceil((2 * CAP) / n),
        fmt(steady.requestsPerSecond),
        `${fmt((100 * steady.requestsPerSecond) / limit)}%`,
        fmt(steady.meanInFlight),
        last.maxInFlight,
        last.r429,
        reports.reduce((a, r) => a + r.sent, 0),
        reports.reduce((a, r) => a + Object.values(r.failed).reduce((x, y) => x + y, 0), 0),
        reports.reduce((a, r) => a + r.termsEnded, 0),
        `${spellQuantile(0.5)} / ${spellQuantile(0.9)} (${spells.length - times.length} of ${spells.length} not within the spell)`,
        pct(cap.wanted),
        `${pct(cap.inFlight)} / ${pct(cap.idleWaiting)} / ${pct(cap.idleUnwanted)} / ${pct(cap.ungranted)}`,
        `${fmt(100 * steady.cpuShare[0]!)}%`,
        `${fmt(100 * steady.machineCpuShare)}%`,
        loadAverage(1),
      ]);
      const causes: Record<string, number> = {};
      for (const r of reports) for (const [cause, count] of Object.entries(r.failed)) causes[cause] = (causes[cause] ?? 0) + count;
      console.log(`${n} workers done; failed reports by cause: ${JSON.stringify(causes)}`);
    }
  } finally {
    await sim.stop();
    await deskProc.stop();
    await server.stop();
  }
  console.log(`C = ${CAP}, latency ${LATENCY_MS} ms: limit ${CAP / (LATENCY_MS / 1000)} requests/s; ${values.seconds} s per fleet`);
  console.log(
    table(
      [
        'workers',
        'lanes each',
        'steady req/s',
        '% of limit',
        'mean in flight',
        'max in flight',
        '429s',
        'lease reports',
        'reports failed',
        'terms ended unanswered',
        'to fair share, median / p90',
        'wanted',
        'cap: in flight / unused, waiting / unused, none waiting / not granted',
        'desk worker CPU',
        'machine CPU',
        'load',
      ],
      rows,
    ),
  );
}
