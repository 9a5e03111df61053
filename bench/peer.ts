// mmif-engine vs. a peer synthetic-data tool (Bespoke Labs Curator, bench/peer_curator.py) on the same
// simulator, latency, cap C and requests with images: a real build of N samples making R requests, and
// Curator sending R independent requests at max_concurrent_requests C; then both SIGKILLed at --kill-at
// shares of their uninterrupted wall time and started again, through bench/countingProxy.ts (re-sent =
// requests answered before the kill and again after it). Requests/s over the steady state.
// Run:   bash tools/install.sh bench && npx tsx bench/peer.ts      (~5 minutes)
//        npx tsx bench/peer.ts --samples 500 --concurrency 128 --latency-ms 1000 --kill-at 0.5
//        ... --trace /tmp/t, --cpu-prof /tmp/p, --heap-prof /tmp/h: the uninterrupted worker's memory and
//        event-loop delay, V8 CPU profile, and sampling heap profile (benchWorker.ts, profileSummary.ts)
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { startTemporalDevServer, type DevServer } from '../local/temporalDevServer.js';
import { startCountingProxy, type ProxyCounts } from './countingProxy.js';
import type { BuildReport } from '../output/contracts/buildReport.js';
import {
  ROOT,
  benchBuildConfig,
  ensureImages,
  fmt,
  pollSimulator,
  procUsage,
  resetSim,
  simStats,
  startSimulatorProcess,
  startWorkerProcess,
  steadyState,
  table,
  type BenchBuildSettings,
  type Proc,
  type SimulatorProc,
} from './harness.js';

const { values } = parseArgs({
  options: {
    samples: { type: 'string', default: '500' },
    concurrency: { type: 'string', default: '128' },
    'latency-ms': { type: 'string', default: '1000' },
    'kill-at': { type: 'string', default: '0.5' },
    only: { type: 'string' }, // mmif | curator
    trace: { type: 'string' },
    'cpu-prof': { type: 'string' },
    'heap-prof': { type: 'string' },
  },
});
const SAMPLES = Number(values.samples);
const C = Number(values.concurrency);
const LATENCY_MS = Number(values['latency-ms']);
/** Kill points, as shares of each tool's own uninterrupted wall time: one killed run per tool and point. */
// An empty --kill-at skips the kill runs (the uninterrupted comparison only).
const KILL_AT = values['kill-at'] ? values['kill-at'].split(',').map(Number) : [];
const LIMIT = C / (LATENCY_MS / 1000);
const CORES = cpus().length;
const PYTHON = path.join(ROOT, 'tools/bench-venv/bin/python');
const PEER = path.join(ROOT, 'bench/peer_curator.py');
const SETTINGS: BenchBuildSettings = { concurrency: C, shardSize: 128, sliceSize: 32, maxParallelShards: 4, llmConcurrency: 32, heartbeatTimeoutSeconds: 5 };

interface Run {
  tool: 'mmif-engine' | 'curator';
  killed: boolean;
  /** The kill point, as a share of R. */
  killAt?: number;
  wallSeconds: number;
  completed: number;
  requestsPerSecond: number;
  /** Completed before the kill (simulator). */
  doneAtKill?: number;
  /** Killed runs go through bench/countingProxy.ts: re-sent requests, counted per request body. */
  proxy?: ProxyCounts;
  /** Seconds from the kill until a request of the new process was answered. */
  restartSeconds?: number;
  cpuMs: number;
  /** mmif-engine: CPU of the Temporal dev server during the run (part of its cost per request). */
  serverCpuMs?: number;
  peakRssMiB: number;
  check: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------
// mmif-engine

/** `killAfterMs`: SIGKILL the worker this long after the build starts, then start a new one. */
async function mmifRun(server: DevServer, sim: SimulatorProc, client: Client, images: string, killAfterMs?: number): Promise<Run & { report: BuildReport }> {
  const output = await mkdtemp(path.join(tmpdir(), 'mmif-bench-peer-'));
  const taskQueue = `peer-${killAfterMs ? 'killed' : 'ref'}`;
  const workers: Proc[] = [];
  let cpuMs = 0;
  let peakRssMiB = 0;
  const account = (w: Proc, base: number) => {
    const u = procUsage(w.pid)!;
    cpuMs += u.cpuMs - base;
    peakRssMiB = Math.max(peakRssMiB, u.peakRssMiB);
  };
  const proxy = killAfterMs ? await startCountingProxy(sim.url) : undefined;
  const simulatorUrl = proxy?.url ?? sim.url;
  try {
    // Diagnostics only for the uninterrupted run: the figures of the table come from it too.
    const diagnostics = killAfterMs
      ? {}
      : {
          ...(values.trace ? { trace: `${values.trace}.jsonl` } : {}),
          ...(values['cpu-prof'] ? { cpuProfile: `${values['cpu-prof']}.cpuprofile` } : {}),
          ...(values['heap-prof'] ? { heapProfile: `${values['heap-prof']}.heapprofile` } : {}),
        };
    let worker = await startWorkerProcess({ address: server.address, taskQueue, simulatorUrl, ...diagnostics });
    workers.push(worker);
    let base = procUsage(worker.pid)!.cpuMs;
    const server0 = procUsage(server.process.pid!)!.cpuMs;
    await resetSim(sim);
    const poller = pollSimulator(sim);
    const started = Date.now();
    const handle = await client.workflow.start('buildDataset', {
      taskQueue,
      workflowId: 'peer',
      args: [benchBuildConfig('peer', output, images, SAMPLES, SETTINGS)],
    });
    let doneAtKill: number | undefined;
    let restartSeconds: number | undefined;
    if (killAfterMs) {
      await sleep(killAfterMs - (Date.now() - started));
      account(worker, base);
      worker.child.kill('SIGKILL');
      await new Promise((r) => worker.child.once('exit', r));
      proxy!.markKill();
      doneAtKill = (await simStats(sim)).completed;
      worker = await startWorkerProcess({ address: server.address, taskQueue, simulatorUrl });
      workers.push(worker);
      base = procUsage(worker.pid)!.cpuMs;
    }
    const report = (await handle.result()) as BuildReport;
    const wallSeconds = (Date.now() - started) / 1000;
    account(worker, base);
    const stallMs = proxy?.counts().stallMs;
    restartSeconds = stallMs === undefined ? undefined : stallMs / 1000;
    const ticks = await poller.stop();
    const stats = await simStats(sim);
    return {
      tool: 'mmif-engine',
      killed: Boolean(killAfterMs),
      wallSeconds,
      completed: stats.completed,
      requestsPerSecond: steadyState(ticks, CORES).requestsPerSecond,
      doneAtKill,
      proxy: proxy?.counts(),
      restartSeconds,
      cpuMs,
      serverCpuMs: procUsage(server.process.pid!)!.cpuMs - server0,
      peakRssMiB,
      check: `${report.shards.committed}/${report.shards.planned} shards, ${report.counts.instruct} instruct, ${report.counts.dpo} dpo, ${report.counts.rejectedSamples} rejected`,
      report,
    };
  } finally {
    for (const w of workers) await w.stop();
    await proxy?.close();
    await rm(output, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------
// curator

interface PeerSummary {
  responses: number;
  seconds: number;
  cpu_ms: number;
  peak_rss_mib: number;
}

/** One curator process; `killAfterMs` after its start, it is SIGKILLed. */
async function curatorProcess(url: string, images: string, requests: number, workingDir: string, killAfterMs?: number): Promise<PeerSummary | 'killed'> {
  const child = spawn(PYTHON, [PEER, '--base-url', url, '--images', images, '--requests', String(requests), '--concurrency', String(C), '--working-dir', workingDir], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, COLUMNS: '200' },
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  if (killAfterMs) {
    const reached = sleep(killAfterMs).then(() => 'reached' as const);
    if ((await Promise.race([reached, exited])) === 'reached') {
      child.kill('SIGKILL');
      await exited;
      return 'killed';
    }
  }
  const code = await exited;
  if (code !== 0) throw new Error(`peer_curator.py exited with ${code}: ${err.slice(-3000)}`);
  return JSON.parse(out.trim().split('\n').at(-1)!) as PeerSummary;
}

async function curatorRun(sim: SimulatorProc, images: string, requests: number, killAfterMs?: number): Promise<Run> {
  const workingDir = await mkdtemp(path.join(tmpdir(), 'mmif-bench-curator-'));
  const proxy = killAfterMs ? await startCountingProxy(sim.url) : undefined;
  try {
    await resetSim(sim);
    const poller = pollSimulator(sim);
    const started = Date.now();
    let doneAtKill: number | undefined;
    let restartSeconds: number | undefined;
    let cpuMs = 0;
    if (killAfterMs) {
      if ((await curatorProcess(proxy!.url, images, requests, workingDir, killAfterMs)) !== 'killed') throw new Error('curator finished before the kill');
      proxy!.markKill();
      doneAtKill = (await simStats(sim)).completed;
      // The killed process's CPU is lost with it; count the restarted run only, and say so.
      const second = await curatorProcess(proxy!.url, images, requests, workingDir);
      if (second === 'killed') throw new Error('unreachable');
      const stallMs = proxy!.counts().stallMs;
      restartSeconds = stallMs === undefined ? undefined : stallMs / 1000;
      cpuMs = second.cpu_ms;
      const ticks = await poller.stop();
      const stats = await simStats(sim);
      return {
        tool: 'curator',
        killed: true,
        wallSeconds: (Date.now() - started) / 1000,
        completed: stats.completed,
        requestsPerSecond: steadyState(ticks, CORES).requestsPerSecond,
        doneAtKill,
        proxy: proxy!.counts(),
        restartSeconds,
        cpuMs,
        peakRssMiB: second.peak_rss_mib,
        check: `${second.responses} responses in the final dataset`,
      };
    }
    const summary = await curatorProcess(sim.url, images, requests, workingDir);
    if (summary === 'killed') throw new Error('unreachable');
    const ticks = await poller.stop();
    const stats = await simStats(sim);
    return {
      tool: 'curator',
      killed: false,
      wallSeconds: (Date.now() - started) / 1000,
      completed: stats.completed,
      requestsPerSecond: steadyState(ticks, CORES).requestsPerSecond,
      cpuMs: summary.cpu_ms,
      peakRssMiB: summary.peak_rss_mib,
      check: `${summary.responses} responses in the final dataset`,
    };
  } finally {
    await proxy?.close();
    await rm(workingDir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------

async function main(): Promise<void> {
  if (!existsSync(PYTHON)) throw new Error(`no ${PYTHON}: run \`bash tools/install.sh bench\` first`);
  console.log(
    `machine: ${CORES} cores; C = ${C}, latency ${LATENCY_MS} ms -> limit ${fmt(LIMIT)} req/s; ${SAMPLES} samples; kill at ${KILL_AT.map((k) => `${k * 100}%`).join(', ')} of each tool's uninterrupted wall time`,
  );
  const images = await ensureImages(SAMPLES, 256);
  const [server, sim] = await Promise.all([startTemporalDevServer(), startSimulatorProcess({ latencyMs: LATENCY_MS, maxConcurrent: C, seed: 3 })]);
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection });
  const runs: Run[] = [];
  try {
    const ref = await mmifRun(server, sim, client, images);
    runs.push(ref);
    const R = ref.completed;
    console.log(`mmif-engine, uninterrupted: ${R} requests in ${fmt(ref.wallSeconds)} s, steady ${fmt(ref.requestsPerSecond)} req/s (${ref.check})`);
    if (values.only !== 'curator') {
      for (const k of KILL_AT) {
        const killed = { ...(await mmifRun(server, sim, client, images, Math.round(ref.wallSeconds * 1000 * k))), killAt: k };
        runs.push(killed);
        console.log(`mmif-engine, killed at ${killed.doneAtKill}: ${killed.completed} requests in ${fmt(killed.wallSeconds)} s (${killed.check})`);
        if (killed.check !== ref.check) console.log(`  WARNING: the killed build's counts differ from the reference: ${ref.check}`);
      }
    }
    if (values.only !== 'mmif') {
      const cur = await curatorRun(sim, images, R);
      runs.push(cur);
      console.log(`curator, uninterrupted: ${cur.completed} requests in ${fmt(cur.wallSeconds)} s, steady ${fmt(cur.requestsPerSecond)} req/s`);
      for (const k of KILL_AT) {
        const curKilled = { ...(await curatorRun(sim, images, R, Math.round(cur.wallSeconds * 1000 * k))), killAt: k };
        runs.push(curKilled);
        console.log(`curator, killed at ${curKilled.doneAtKill}: ${curKilled.completed} requests in ${fmt(curKilled.wallSeconds)} s (${curKilled.check})`);
      }
    }
  } finally {
    await connection.close();
    await server.stop();
    await sim.stop();
  }

  const R = runs[0]!.completed;
  console.log(`\nPeer comparison: ${R} requests with a 256x256 JPEG each, latency ${LATENCY_MS} ms, cap C = ${C} (limit ${fmt(LIMIT)} req/s)\n`);
  console.log(
    table(
      ['tool', 'run', 'wall s', 'completed', 'steady req/s', '% of limit', 'done before kill', 're-sent after kill', 'stall s', 'client CPU ms/request', 'peak RSS MiB', 'output'],
      runs.map((r) => [
        r.tool,
        r.killed ? `SIGKILL at ${r.killAt! * 100}%` : 'uninterrupted',
        fmt(r.wallSeconds),
        r.completed,
        fmt(r.requestsPerSecond),
        `${fmt((100 * r.requestsPerSecond) / LIMIT)}%`,
        r.proxy?.doneBeforeKill ?? '-',
        r.proxy ? `${r.proxy.resentAfterKill} (${fmt((100 * r.proxy.resentAfterKill) / r.proxy.doneBeforeKill, 2)}%)` : '-',
        r.restartSeconds === undefined ? '-' : fmt(r.restartSeconds),
        r.killed ? '-' : fmt(r.cpuMs / r.completed, 2) + (r.serverCpuMs === undefined ? '' : ` (+${fmt(r.serverCpuMs / r.completed, 2)} Temporal)`),
        fmt(r.peakRssMiB, 0),
        r.check,
      ]),
    ),
  );
  const [m, c] = [runs.find((r) => r.tool === 'mmif-engine' && !r.killed), runs.find((r) => r.tool === 'curator' && !r.killed)];
  if (m && c) {
    console.log(`\nratios mmif-engine / curator:`);
    console.log(`  steady requests/s      ${fmt(m.requestsPerSecond / c.requestsPerSecond, 3)}`);
    console.log(`  wall time (same R)     ${fmt(m.wallSeconds / c.wallSeconds, 3)}`);
    console.log(
      `  client CPU per request ${fmt(m.cpuMs / m.completed / (c.cpuMs / c.completed), 3)} (worker only; with the Temporal dev server ${fmt((m.cpuMs + (m.serverCpuMs ?? 0)) / m.completed / (c.cpuMs / c.completed), 3)})`,
    );
    const killed = (tool: Run['tool']) => runs.filter((r) => r.tool === tool && r.proxy);
    console.log(`  (stall: from the kill until the new process's first request is answered; re-sent: answered before the kill and again after it)`);
    const sum = (rs: Run[], f: (r: Run) => number) => rs.reduce((a, r) => a + f(r), 0);
    const [mk, ck] = [killed('mmif-engine'), killed('curator')];
    if (mk.length > 0 && ck.length > 0) {
      const resent = (rs: Run[]) => sum(rs, (r) => r.proxy!.resentAfterKill);
      const done = (rs: Run[]) => sum(rs, (r) => r.proxy!.doneBeforeKill);
      const share = (rs: Run[]) => resent(rs) / done(rs);
      console.log(
        `  re-sent after a kill   ${resent(mk)} of ${done(mk)} / ${resent(ck)} of ${done(ck)} done before the kills` +
          (resent(ck) > 0 ? ` = ${fmt(resent(mk) / resent(ck), 3)} (as shares of the work done: ${fmt(share(mk) / share(ck), 3)})` : ''),
      );
      const overhead = (rs: Run[], ref: Run) => sum(rs, (r) => r.wallSeconds - ref.wallSeconds) / rs.length;
      const stall = (rs: Run[]) => sum(rs, (r) => r.restartSeconds ?? 0) / rs.length;
      console.log(`  stall after a kill     ${fmt(stall(mk))} s / ${fmt(stall(ck))} s = ${fmt(stall(mk) / stall(ck), 3)} (mean)`);
      console.log(`  wall time lost to it   ${fmt(overhead(mk, m))} s / ${fmt(overhead(ck, c))} s (mean)`);
      for (const r of [...mk, ...ck]) console.log(`  ${r.tool} at ${r.killAt! * 100}%: ${JSON.stringify(r.proxy)}`);
    }
  }
}

await main();
