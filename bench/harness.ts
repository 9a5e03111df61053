/**
 * Shared pieces of the model-call benchmarks (bench/throughput.ts, bench/resume.ts): procedural CC3M
 * images, the simulator and workers as separate processes (so each one's CPU and memory can be read
 * from /proc), a 1 s poller of the simulator's GET /admin/stats, and steady-state arithmetic.
 *
 * Everything listens on 127.0.0.1 only.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, stopProcess } from '../local/temporalDevServer.js';
import type { BuildConfigInput } from '../config/buildConfig.js';
import { sceneJpeg } from '../test/fixtures/images.js';
import { DEFAULT_ACTIVITY_SLOTS } from '../worker/createWorker.js';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const CLI = path.join(ROOT, 'cli/mmif.ts');
const BENCH_WORKER = path.join(ROOT, 'bench/benchWorker.ts');
const CLK_TCK = 100;

// ---------------------------------------------------------------------------------------
// Images

/**
 * A CC3M `flat` folder of `count` different size x size procedural JPEGs (+ captions), made once and
 * reused from the temp dir. Every image differs by content hash (the build drops duplicates).
 */
export async function ensureImages(count: number, size = 256): Promise<string> {
  const dir = path.join(tmpdir(), 'mmif-bench', `cc3m-flat-${count}-${size}`);
  const done = `${dir}.complete`;
  if (existsSync(done)) return dir;
  await mkdir(dir, { recursive: true });
  const seen = new Set<string>();
  let seed = 0;
  const started = Date.now();
  for (let i = 0; i < count; i++) {
    let jpeg: Buffer;
    let hash: string;
    do {
      jpeg = await sceneJpeg(seed++, size, size);
      hash = createHash('sha256').update(jpeg).digest('hex');
    } while (seen.has(hash));
    seen.add(hash);
    const key = String(i).padStart(9, '0');
    await writeFile(path.join(dir, `${key}.jpg`), jpeg);
    await writeFile(path.join(dir, `${key}.txt`), `a procedural scene with shapes, number ${i}`);
  }
  await writeFile(done, `${count} images in ${Date.now() - started} ms\n`);
  return dir;
}

// ---------------------------------------------------------------------------------------
// Processes

export interface Proc {
  child: ChildProcess;
  pid: number;
  stderr: () => string;
  stop(): Promise<void>;
}

/** `node --import tsx <script> ...args`, node itself (no tsx wrapper), so the pid is the process that works. */
export async function startNodeProcess(script: string, args: string[], env: NodeJS.ProcessEnv, readyText: string, timeoutMs = 60_000): Promise<Proc & { stdout: () => string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${path.basename(script)} not ready in ${timeoutMs} ms: ${err}`)), timeoutMs);
    const check = () => {
      if (out.includes(readyText)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${path.basename(script)} exited early (${code}): ${err.trim()}`));
    });
  });
  child.removeAllListeners('exit');
  return { child, pid: child.pid!, stdout: () => out, stderr: () => err, stop: () => stopProcess(child) };
}

export interface SimulatorProc extends Proc {
  url: string;
  admin: string;
}

/** The simulator (`mmif simulator`) in its own process, configured by SIM_* variables. */
export async function startSimulatorProcess(faults: Record<string, number>): Promise<SimulatorProc> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { SIM_HOST: '127.0.0.1', SIM_PORT: String(port) };
  const names: Record<string, string> = {
    latencyMs: 'SIM_LATENCY_MS',
    latencyJitterMs: 'SIM_LATENCY_JITTER_MS',
    maxConcurrent: 'SIM_MAX_CONCURRENT',
    complianceRate: 'SIM_COMPLIANCE_RATE',
    judgeLeniency: 'SIM_JUDGE_LENIENCY',
    retryAfterSeconds: 'SIM_RETRY_AFTER_SECONDS',
    seed: 'SIM_SEED',
  };
  for (const [k, v] of Object.entries(faults)) {
    const name = names[k];
    if (!name) throw new Error(`harness: unknown simulator setting ${k}`);
    env[name] = String(v);
  }
  const proc = await startNodeProcess(CLI, ['simulator'], env, 'listening on');
  return { ...proc, url: `http://127.0.0.1:${port}/v1`, admin: `http://127.0.0.1:${port}/admin` };
}

/**
 * A worker process: the real `mmif worker` (DEFAULT_ACTIVITY_SLOTS concurrent activities, as shipped), or, with
 * maxConcurrentActivities, trace, cpuProfile, heapProfile or splitOnly, bench/benchWorker.ts (see there).
 */
export function startWorkerProcess(options: {
  address: string;
  taskQueue: string;
  simulatorUrl: string;
  maxConcurrentActivities?: number;
  trace?: string;
  cpuProfile?: string;
  /** A file the worker writes its HTTP requests and connections to, counted (bench/storeCalls.ts). */
  storeCalls?: string;
  heapProfile?: string;
  splitOnly?: boolean;
  /** `mmif worker --metrics <this>`: the worker records and serves its metrics. */
  metricsAt?: string;
  /** Added to the worker's environment (OTEL_* for traces). */
  env?: NodeJS.ProcessEnv;
}): Promise<Proc> {
  const env: NodeJS.ProcessEnv = { TEMPORAL_ADDRESS: options.address, MMIF_TASK_QUEUE: options.taskQueue, OPENAI_BASE_URL: options.simulatorUrl, ...options.env };
  if (process.env.BENCH_WORKER_NODE_OPTIONS) env.NODE_OPTIONS = process.env.BENCH_WORKER_NODE_OPTIONS;
  if (options.maxConcurrentActivities === undefined && !options.trace && !options.cpuProfile && !options.storeCalls && !options.heapProfile && !options.splitOnly)
    return startNodeProcess(CLI, ['worker', ...(options.metricsAt ? ['--metrics', options.metricsAt] : [])], env, 'worker polling', 120_000);
  if (options.metricsAt) throw new Error('metrics are measured on the real `mmif worker` (no --activities, --trace or profiles)');
  const extra: NodeJS.ProcessEnv = { BENCH_MAX_ACTIVITIES: String(options.maxConcurrentActivities ?? DEFAULT_ACTIVITY_SLOTS) };
  if (options.splitOnly) extra.BENCH_SPLIT_ONLY = '1';
  if (options.trace) extra.BENCH_TRACE = options.trace;
  if (options.cpuProfile) extra.BENCH_CPU_PROF = options.cpuProfile;
  if (options.storeCalls) extra.BENCH_STORE_CALLS = options.storeCalls;
  if (options.heapProfile) extra.BENCH_HEAP_PROF = options.heapProfile;
  return startNodeProcess(BENCH_WORKER, [], { ...env, ...extra }, 'worker polling', 120_000);
}

interface ProcUsage {
  /** user + system CPU, ms. */
  cpuMs: number;
  rssMiB: number;
  /** Peak RSS (VmHWM), MiB. */
  peakRssMiB: number;
}

/** CPU and memory of a live process, from /proc (Linux). Undefined once it is gone. */
export function procUsage(pid: number): ProcUsage | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state): utime is field 14, stime field 15.
    const cpuMs = ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
    return { cpuMs, rssMiB: kib('VmRSS') / 1024, peakRssMiB: kib('VmHWM') / 1024 };
  } catch {
    return undefined;
  }
}

/** Total CPU of the machine (all cores), ms, from /proc/stat: busy and all. */
function machineCpu(): { busyMs: number; totalMs: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const idle = v[3]! + (v[4] ?? 0);
  const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busyMs: ((total - idle) * 1000) / CLK_TCK, totalMs: (total * 1000) / CLK_TCK };
}

// ---------------------------------------------------------------------------------------
// Simulator stats over time

interface SimStats {
  requests: number;
  completed: number;
  promptTokens: number;
  completionTokens: number;
  /** Set when the simulator serves as GPUs (simulator/gpuProfile.ts). */
  gpus?: { slots: number; busyMs: number };
  byStatus: Record<string, number>;
  inFlight: number;
  maxInFlight: number;
  byStage: Record<string, number>;
}

export interface Tick {
  /** ms since the poller started. */
  t: number;
  requests: number;
  completed: number;
  r429: number;
  inFlight: number;
  maxInFlight: number;
  /** Machine CPU busy (all cores), ms, cumulative. */
  machineBusyMs: number;
  /** CPU ms, cumulative, of each watched process (by the pids given to the poller). */
  cpuMs: number[];
}

export async function simStats(sim: { admin: string }): Promise<SimStats> {
  const res = await fetch(`${sim.admin}/stats`);
  return (await res.json()) as SimStats;
}

export async function resetSim(sim: { admin: string }): Promise<void> {
  await fetch(`${sim.admin}/reset`, { method: 'POST' });
}

/** Polls GET /admin/stats every `everyMs`; `stop()` returns the ticks (and takes a last one). */
export function pollSimulator(sim: { admin: string }, pids: number[] = [], everyMs = 1000): { ticks: Tick[]; stop(): Promise<Tick[]> } {
  const ticks: Tick[] = [];
  const start = Date.now();
  const take = async () => {
    const s = await simStats(sim);
    ticks.push({
      t: Date.now() - start,
      requests: s.requests,
      completed: s.completed,
      r429: s.byStatus['429'] ?? 0,
      inFlight: s.inFlight,
      maxInFlight: s.maxInFlight,
      machineBusyMs: machineCpu().busyMs,
      cpuMs: pids.map((pid) => procUsage(pid)?.cpuMs ?? Number.NaN),
    });
  };
  let running = take();
  const timer = setInterval(() => {
    running = running.then(take, take);
  }, everyMs);
  return {
    ticks,
    stop: async () => {
      clearInterval(timer);
      await running.catch(() => {});
      await take().catch(() => {});
      return ticks;
    },
  };
}

export interface SteadyState {
  /** Window used, ms since the poller started. */
  from: number;
  to: number;
  completed: number;
  requestsPerSecond: number;
  /** 429 replies per second in the window. */
  r429PerSecond: number;
  meanInFlight: number;
  /** Machine CPU busy in the window, as a share of all cores. */
  machineCpuShare: number;
  /** CPU of each watched process in the window, as a share of one core. */
  cpuShare: number[];
}

/**
 * The middle `share` of the run by completed requests: the window from the first tick at which
 * (1-share)/2 of all completions had happened to the first tick at which (1+share)/2 had.
 */
export function steadyState(ticks: Tick[], cores: number, share = 0.8): SteadyState {
  const total = ticks.at(-1)!.completed;
  const lo = ticks.find((k) => k.completed >= (total * (1 - share)) / 2)!;
  const hi = ticks.find((k) => k.completed >= (total * (1 + share)) / 2)!;
  const inside = ticks.filter((k) => k.t >= lo.t && k.t <= hi.t);
  const seconds = (hi.t - lo.t) / 1000;
  return {
    from: lo.t,
    to: hi.t,
    completed: hi.completed - lo.completed,
    requestsPerSecond: (hi.completed - lo.completed) / seconds,
    r429PerSecond: (hi.r429 - lo.r429) / seconds,
    meanInFlight: inside.reduce((a, k) => a + k.inFlight, 0) / Math.max(1, inside.length),
    machineCpuShare: (hi.machineBusyMs - lo.machineBusyMs) / (seconds * 1000 * cores),
    cpuShare: hi.cpuMs.map((ms, i) => (ms - lo.cpuMs[i]!) / (seconds * 1000)),
  };
}

// ---------------------------------------------------------------------------------------
// Output

export function table(headers: string[], rows: Array<Array<string | number>>): string {
  const cells = rows.map((r) => r.map((c) => String(c)));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i]!.length)));
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(headers), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...cells.map(line)].join('\n');
}

export const fmt = (n: number, digits = 1): string => n.toFixed(digits);

/** The `q` quantile of `values` (the nearest rank at or below it): p50 is quantile(values, 0.5). */
export function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

/** The machine's load averages over 1, 5 and 15 minutes (the first `fields` of them), from /proc/loadavg; '?' elsewhere. */
export function loadAverage(fields = 3): string {
  return process.platform === 'linux' ? readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, fields).join(' ') : '?';
}

// ---------------------------------------------------------------------------------------
// Build config

export interface BenchBuildSettings {
  /** Endpoint cap C: models.default.concurrency. */
  concurrency: number;
  shardSize: number;
  sliceSize: number;
  /** Unset: the engine's own (shards in flight from the endpoint's slots: domain/sampleLanes.ts). */
  maxParallelShards?: number;
  /** Unset: the config's default (a build's slices share the worker's sample lanes; it bounds only stage-by-stage shards). */
  llmConcurrency?: number;
  /** Shorter than the default 30 s, so a killed worker's activities move on sooner (resume bench). */
  heartbeatTimeoutSeconds?: number;
}

/** The benchmark build: the flat folder of procedural images, the simulator's model, the given parallelism. */
export function benchBuildConfig(buildId: string, output: string, images: string, samples: number, s: BenchBuildSettings): BuildConfigInput {
  return {
    buildId,
    seed: 1,
    output,
    sources: [{ type: 'cc3m', uri: images, layout: 'flat' }],
    maxSamples: samples,
    shardSize: s.shardSize,
    sliceSize: s.sliceSize,
    ...(s.maxParallelShards !== undefined ? { maxParallelShards: s.maxParallelShards } : {}),
    // The procedural images are 256x256 (the default minimum short side, 224, passes them too).
    image: { minShortSide: 200 },
    ...(s.heartbeatTimeoutSeconds
      ? { retry: { maximumAttempts: 8, initialIntervalSeconds: 1, maximumIntervalSeconds: 10, heartbeatTimeoutSeconds: s.heartbeatTimeoutSeconds } }
      : {}),
    models: { default: { model: 'mmif-sim-vlm', concurrency: s.concurrency } },
    ...(s.llmConcurrency !== undefined ? { llm: { concurrency: s.llmConcurrency } } : {}),
  };
}
