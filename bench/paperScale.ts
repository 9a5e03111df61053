// The paper's build end to end, at a fraction of its size: the mix of the authors' training configs
// (`mix-cc3m_13k+dive_4k+allava_6k`), `targets: {instruct: 23000, dpo: 23000}` times --scale, over
// sources generated in their release layouts (bench/paperSources.ts), output on versitygw, 2 `mmif
// worker`s, a dev server, and the simulator as --gpus GPUs of the Qwen2.5-VL-7B profile
// (simulator/gpuProfile.ts; --speedup divides its latencies). Reports, from this one run: wall time
// against the endpoint bound (whole-build efficiency = bound / wall); time in pre-flight, planning,
// each round and its tail, each top-up planning call, with no shard running, and finalize; requests
// and tokens per accepted record; worker CPU and RSS; history events; objects and bytes written (and of rejects/).
// Run:   npx tsx bench/paperScale.ts [--scale 0.0625] [--gpus 2] [--speedup 4] [--workers 2] [--json /tmp/paper.json]
//        [--cpu-prof DIR] [--heap-prof DIR] [--store-calls DIR]: each worker is bench/benchWorker.ts, writing
//        DIR/worker-N.cpuprofile / DIR/worker-N.heapprofile (objects that outlived a young-generation collection) /
//        DIR/worker-N.json (its HTTP requests and connections, bench/storeCalls.ts; printed per model request)
import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import type { BuildConfigInput } from '../config/buildConfig.js';
import { freePort, startTemporalDevServer } from '../local/temporalDevServer.js';
import type { BuildReport } from '../output/contracts/buildReport.js';
import type { BuildPlan } from '../pipeline/planning/planBuild.types.js';
import { buildLayout } from '../storage/buildLayout.js';
import { GPU_PROFILES } from '../simulator/gpuProfile.js';
import { startS3Server, useS3Env } from '../test/harness/s3Server.js';
import { CLI, fmt, loadAverage, pollSimulator, procUsage, simStats, startNodeProcess, startWorkerProcess, steadyState, type Proc } from './harness.js';
import { perModelRequest, type StoreCalls } from './storeCalls.js';
import { PAPER_SOURCE_SIZES, paperMix, paperSources, scaled } from './paperSources.js';
import { sampleLanes, shardsToFeedLanes } from '../domain/sampleLanes.js';

/** The build's shape (output files of 128 samples, slices of 32); lanes and shards in flight are the engine's own (domain/sampleLanes.ts). */
const SHARD_SIZE = 128;
const SLICE_SIZE = 32;

const { values } = parseArgs({
  options: {
    scale: { type: 'string', default: '0.0625' },
    gpus: { type: 'string', default: '2' },
    speedup: { type: 'string', default: '4' },
    workers: { type: 'string', default: '2' },
    json: { type: 'string' },
    'cpu-prof': { type: 'string' },
    'heap-prof': { type: 'string' },
    'store-calls': { type: 'string' },
  },
});
const SCALE = Number(values.scale);
const GPUS = Number(values.gpus);
const SPEEDUP = Number(values.speedup);
const PROFILE = GPU_PROFILES['qwen2.5-vl-7b'];
const CAPACITY = GPUS * PROFILE.requestsPerSecond * SPEEDUP;
const ROOT = path.join(process.env.TMPDIR ?? tmpdir(), 'mmif-bench', 'paper');
const log = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);

const sources = await paperSources(ROOT, PAPER_SOURCE_SIZES, log);
const target = (n: number) => scaled(n, SCALE);
const buildId = `paper-${Date.now()}`;

const s3Server = await startS3Server();
const s3 = useS3Env(s3Server);
const temporal = await startTemporalDevServer();
const simEnv = {
  SIM_HOST: '127.0.0.1',
  SIM_PORT: String(await freePort()),
  SIM_SEED: '3',
  SIM_GPU_PROFILE: 'qwen2.5-vl-7b',
  SIM_GPUS: String(GPUS),
  SIM_GPU_SPEEDUP: String(SPEEDUP),
};
const sim = await startNodeProcess(CLI, ['simulator'], simEnv, 'listening on');
const simUrls = { url: `http://127.0.0.1:${simEnv.SIM_PORT}/v1`, admin: `http://127.0.0.1:${simEnv.SIM_PORT}/admin` };
const workers: Proc[] = [];
const WORKERS = Number(values.workers);
const profileDir = values['cpu-prof'];
const heapDir = values['heap-prof'];
const callsDir = values['store-calls'];
for (const dir of [profileDir, heapDir, callsDir]) if (dir) mkdirSync(dir, { recursive: true });
/** The build's model requests, once it finished: the denominator of the store calls printed after the servers stop. */
let modelRequests = 0;
// What the engine derives from the endpoint's slots (no lane knob is set below): reported, not configured.
const SLOTS = GPUS * PROFILE.slots;
const lanes = sampleLanes(SLOTS);
const shardsInFlight = shardsToFeedLanes(SLOTS, { shardSize: SHARD_SIZE, sliceSize: SLICE_SIZE, parallelSlices: 4 });
try {
  const taskQueue = 'bench-paper';
  for (let i = 0; i < WORKERS; i++)
    workers.push(
      await startWorkerProcess({
        address: temporal.address,
        taskQueue,
        simulatorUrl: simUrls.url,
        ...(profileDir ? { cpuProfile: path.join(profileDir, `worker-${i}.cpuprofile`) } : {}),
        ...(heapDir ? { heapProfile: path.join(heapDir, `worker-${i}.heapprofile`) } : {}),
        ...(callsDir ? { storeCalls: path.join(callsDir, `worker-${i}.json`) } : {}),
      }),
    );
  const connection = await Connection.connect({ address: temporal.address });
  const client = new Client({ connection });
  const config: BuildConfigInput = {
    buildId,
    seed: 1,
    output: `s3://${s3Server.bucket}/paper`,
    s3,
    ...paperMix(sources, SCALE),
    shardSize: SHARD_SIZE,
    sliceSize: SLICE_SIZE,
    models: { default: { model: 'mmif-sim-vlm', concurrency: SLOTS } },
  };
  log(
    `scale ${SCALE}: targets ${target(23_000)} + ${target(23_000)}; ${GPUS} GPUs x ${PROFILE.requestsPerSecond} req/s x speedup ${SPEEDUP} = ${fmt(CAPACITY)} req/s, ${GPUS * PROFILE.slots} in flight; ` +
      `engine-derived: ${lanes} sample lanes (${WORKERS} workers), ${shardsInFlight} shards in flight; load ${loadAverage()}`,
  );
  const loadBefore = loadAverage();
  const cpu0 = workers.map((w) => procUsage(w.pid)!.cpuMs);
  const poll = pollSimulator(simUrls, [...workers.map((w) => w.pid), sim.pid, temporal.process.pid!]);
  const started = Date.now();
  const workflowId = buildId;
  const report = (await client.workflow.execute('buildDataset', { taskQueue, workflowId, args: [config] })) as BuildReport;
  const wallSeconds = (Date.now() - started) / 1000;
  const ticks = await poll.stop();
  const usage = workers.map((w, i) => ({ cpuMs: procUsage(w.pid)!.cpuMs - cpu0[i]!, peakRssMiB: procUsage(w.pid)!.peakRssMiB }));
  const stats = await simStats(simUrls);
  const loadAfter = loadAverage();

  // Phases, from the parent's histories (every run of it: it continues as new).
  const plan = JSON.parse(await readFile(path.join(s3Server.dataDir, s3Server.bucket, 'paper', buildLayout(buildId).planSummary), 'utf8')) as BuildPlan;
  const phases = await buildPhases(client, workflowId, started, plan.rounds);
  const events = await historyEvents(client, workflowId);
  const written = walk(path.join(s3Server.dataDir, s3Server.bucket, 'paper'));
  const finalizeStart = phases.find((p) => p.name === 'finalize')?.from ?? 0;
  const outputsAt = written.files
    .filter((f) => /README\.md$|quality|viewer|index\.html$/i.test(f.path))
    .map((f) => ({ path: f.path, secondsAfterFinalizeStart: fmt((f.mtimeMs - started) / 1000 - finalizeStart) }));
  const records = report.counts.instruct + report.counts.dpo;
  const bound = stats.completed / CAPACITY;
  // The mix's replies took this much GPU slot time: with every slot busy, no shorter wall time serves them.
  const slotBound = stats.gpus ? stats.gpus.busyMs / 1000 / stats.gpus.slots : Number.NaN;
  const steady = steadyState(ticks, 2);
  const result = {
    scale: SCALE,
    gpus: GPUS,
    speedup: SPEEDUP,
    lanes,
    shardsInFlight,
    loadBefore,
    loadAfter,
    wallSeconds: fmt(wallSeconds),
    capacity: fmt(CAPACITY, 2),
    requests: stats.completed,
    r429: stats.byStatus['429'] ?? 0,
    boundSeconds: fmt(bound),
    wholeBuildEfficiency: `${fmt((100 * bound) / wallSeconds)}%`,
    slotTimeBoundSeconds: fmt(slotBound),
    slotTimeEfficiency: `${fmt((100 * slotBound) / wallSeconds)}%`,
    steadyState: `${fmt(steady.requestsPerSecond)} req/s = ${fmt((100 * steady.requestsPerSecond) / CAPACITY)}% of capacity`,
    counts: report.counts,
    targets: report.targets,
    requestsPerRecord: fmt(stats.completed / records, 2),
    promptTokensPerRecord: Math.round(stats.promptTokens / records),
    completionTokensPerRecord: Math.round(stats.completionTokens / records),
    workers: usage.map((u) => ({ cpuSeconds: fmt(u.cpuMs / 1000), peakRssMiB: u.peakRssMiB })),
    phases: phases.map((p) => ({ ...p, from: fmt(p.from), seconds: fmt(p.seconds) })),
    historyEvents: events,
    written: { objects: written.files.length, bytes: written.bytes, rejectsBytes: written.files.filter((f) => /\/rejects\/shard-/.test(f.path)).reduce((a, f) => a + f.bytes, 0) },
    outputsAt,
  };
  modelRequests = result.requests;
  console.log(JSON.stringify(result, null, 2));
  if (values.json) writeFileSync(values.json, JSON.stringify({ ...result, ticks }, null, 2));
} finally {
  await Promise.all(workers.map((w) => w.stop()));
  await sim.stop();
  await temporal.stop();
  await s3Server.stop();
}
if (callsDir && modelRequests > 0) {
  const all = workers.map((_, i) => JSON.parse(readFileSync(path.join(callsDir, `worker-${i}.json`), 'utf8')) as StoreCalls);
  console.log(`store calls and connections per model request (${modelRequests} requests, ${workers.length} workers):`);
  for (const [key, n] of perModelRequest(all, modelRequests).filter(([, n]) => n >= 0.01)) console.log(`  ${n.toFixed(2)}  ${key}`);
}

interface Phase {
  name: string;
  /** Seconds after the build started. */
  from: number;
  seconds: number;
}

/**
 * Pre-flight, planning, each round's shards (first start to last end) and tail (its last shard's
 * start to the round's last end), each top-up planning call (from a forecast, or once all are committed), the time no shard ran between the first shard start and
 * finalize (the endpoint idles there), the build's last tail, and finalize: from the parent's
 * activity and child-workflow events over all its runs. `rounds`: the first shard of each round
 * (the plan's `rounds`).
 */
async function buildPhases(client: Client, workflowId: string, t0: number, rounds: readonly number[]): Promise<Phase[]> {
  const phases: Phase[] = [];
  const at = (e: { eventTime?: { seconds?: unknown; nanos?: number | null } | null }) =>
    (Number(e.eventTime!.seconds) * 1000 + Math.floor((e.eventTime!.nanos ?? 0) / 1e6) - t0) / 1000;
  const roundOf = (shard: number) => rounds.filter((start) => start <= shard).length - 1;
  const shardOf = (id: string | null | undefined) => Number(/\/shard-(\d+)$/.exec(id ?? '')?.[1]);
  const scheduled = new Map<string, { type: string; at: number; round?: number; forecast: boolean }>();
  const byRound = rounds.map(() => ({ firstStart: Number.NaN, lastStart: Number.NaN, lastEnd: Number.NaN }));
  const runs: string[] = [];
  for await (const execution of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) runs.push(execution.runId);
  const histories = await Promise.all(runs.map((runId) => client.workflow.getHandle(workflowId, runId).fetchHistory()));
  const all = histories.flatMap((h) => h.events ?? []).sort((a, b) => at(a) - at(b));
  let running = 0;
  let idleSince = Number.NaN;
  let idle = 0;
  let firstStart = Number.NaN;
  let lastStart = Number.NaN;
  let lastEnd = Number.NaN;
  let commitSeconds = 0;
  for (const e of all) {
    const a = e.activityTaskScheduledEventAttributes;
    if (a) {
      const data = a.input?.payloads?.[0]?.data;
      const input = data ? (JSON.parse(Buffer.from(data).toString()) as { round?: number; forecast?: unknown }) : {};
      scheduled.set(`${e.eventId}`, { type: a.activityType!.name!, at: at(e), round: input.round, forecast: input.forecast !== undefined });
    }
    const done = e.activityTaskCompletedEventAttributes;
    if (done) {
      const s = scheduled.get(`${done.scheduledEventId}`);
      if (!s) continue;
      const names: Record<string, string> = {
        preflightEndpoints: 'pre-flight',
        planBuild: 'planning',
        planTopUp: `round ${s.round} planning${s.forecast ? ' (forecast)' : ''}`,
        finalizeBuild: 'finalize',
      };
      const name = names[s.type];
      if (name) phases.push({ name, from: s.at, seconds: at(e) - s.at });
      if (s.type === 'commitShard') commitSeconds += at(e) - s.at;
      if (s.type === 'finalizeBuild' && !Number.isNaN(idleSince)) idle += s.at - idleSince;
    }
    const startedId = e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId;
    if (startedId) {
      const r = byRound[roundOf(shardOf(startedId))];
      if (r && Number.isNaN(r.firstStart)) r.firstStart = at(e);
      if (r) r.lastStart = at(e);
      if (Number.isNaN(firstStart)) firstStart = at(e);
      lastStart = at(e);
      if (running === 0 && !Number.isNaN(idleSince)) idle += at(e) - idleSince;
      running += 1;
    }
    const endedId = (e.childWorkflowExecutionCompletedEventAttributes ?? e.childWorkflowExecutionFailedEventAttributes)?.workflowExecution?.workflowId;
    if (endedId) {
      const r = byRound[roundOf(shardOf(endedId))];
      if (r) r.lastEnd = at(e);
      lastEnd = at(e);
      running -= 1;
      if (running === 0) idleSince = at(e);
    }
  }
  for (const [index, r] of byRound.entries()) {
    if (Number.isNaN(r.firstStart)) continue;
    phases.push({ name: `round ${index} shards (first start to last end)`, from: r.firstStart, seconds: r.lastEnd - r.firstStart });
    phases.push({ name: `round ${index} tail (its last shard start to its last end)`, from: r.lastStart, seconds: r.lastEnd - r.lastStart });
  }
  phases.push({ name: 'build tail (last shard start to last shard end)', from: lastStart, seconds: lastEnd - lastStart });
  phases.push({ name: 'no shard running (first shard start to finalize)', from: firstStart, seconds: idle });
  phases.push({ name: 'commitShard activities (sum, beside the shards)', from: firstStart, seconds: commitSeconds });
  return phases.sort((a, b) => a.from - b.from);
}

/** History events: the parent's (all runs) and its shard children's (mean and max). */
async function historyEvents(client: Client, workflowId: string): Promise<{ parentRuns: number; parentEvents: number; shards: number; shardMean: number; shardMax: number }> {
  let parentRuns = 0;
  let parentEvents = 0;
  const shardCounts: number[] = [];
  for await (const execution of client.workflow.list({ query: `WorkflowId STARTS_WITH '${workflowId}'` })) {
    const n = (await client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory()).events?.length ?? 0;
    if (execution.workflowId === workflowId) {
      parentRuns++;
      parentEvents += n;
    } else {
      shardCounts.push(n);
    }
  }
  return {
    parentRuns,
    parentEvents,
    shards: shardCounts.length,
    shardMean: Math.round(shardCounts.reduce((a, b) => a + b, 0) / Math.max(1, shardCounts.length)),
    shardMax: Math.max(0, ...shardCounts),
  };
}

function walk(dir: string): { files: Array<{ path: string; bytes: number; mtimeMs: number }>; bytes: number } {
  const files: Array<{ path: string; bytes: number; mtimeMs: number }> = [];
  const visit = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, entry.name);
      if (entry.isDirectory()) visit(full);
      else {
        const st = statSync(full);
        files.push({ path: path.relative(dir, full), bytes: st.size, mtimeMs: st.mtimeMs });
      }
    }
  };
  visit(dir);
  return { files, bytes: files.reduce((a, f) => a + f.bytes, 0) };
}
