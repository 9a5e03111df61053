/**
 * `mmif worker` with knobs for the benchmarks: Worker.create with createWorker's options plus an
 * activity interceptor, the same connection settings and graceful stop. BENCH_MAX_ACTIVITIES: the
 * worker's maxConcurrentActivities. BENCH_TRACE=<file>: JSON lines, one per finished activity
 * ({t, activity, stage, ms}) and one per second ({t, loopMaxMs, loopMeanMs, mem, cpuMs, limiters,
 * leaseReports, slots}: event-loop delay, memory, CPU, limiter states, every 8th request's slot times;
 * read by bench/shareTrace.ts). BENCH_SPLIT_ONLY=1: limits split 1/N without leases. BENCH_CPU_PROF /
 * BENCH_HEAP_PROF=<file>: a V8 CPU profile / a sampling heap profile of objects that outlived a
 * young-generation collection, written on SIGTERM. BENCH_STORE_CALLS=<file>: its HTTP requests and
 * connections counted (bench/storeCalls.ts), written as JSON on SIGTERM.
 * Run:   BENCH_MAX_ACTIVITIES=32 node --import tsx bench/benchWorker.ts
 */
import { currentOnceSeen, versionedWorkerOptions, workerDeploymentVersion } from '../worker/deploymentVersion.js';
import { appendFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { writeFile } from 'node:fs/promises';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import { NativeConnection, Worker, type ActivityInboundCallsInterceptor } from '@temporalio/worker';
import * as activities from '../activities/index.js';
import { limiterSnapshots } from '../llm/limiter.js';
import { slotTraces, type SlotTimes } from '../llm/attemptSlot.js';
import { prebuiltWorkflowBundle } from '../worker/bundleProcess.js';
import { createWorker, DEFAULT_ACTIVITY_SLOTS, limitHeapGrowth, withSmallWorkflowThreadHeap } from '../worker/createWorker.js';
import { leaseReportsSent, shareEndpointLimits, splitAmongPollers } from '../worker/endpointSharing.js';
import { temporalSettingsFromEnv } from '../worker/connectionFromEnv.js';
import { countStoreCalls } from './storeCalls.js';

const max = Number(process.env.BENCH_MAX_ACTIVITIES ?? DEFAULT_ACTIVITY_SLOTS);
if (!Number.isInteger(max) || max < 1) throw new Error(`BENCH_MAX_ACTIVITIES must be a positive integer, got ${process.env.BENCH_MAX_ACTIVITIES}`);
const trace = process.env.BENCH_TRACE;
const splitOnly = process.env.BENCH_SPLIT_ONLY === '1';
const settings = temporalSettingsFromEnv();
const connection = await NativeConnection.connect(settings.connection);
const storeCallsFile = process.env.BENCH_STORE_CALLS;
const storeCalls = storeCallsFile ? countStoreCalls() : undefined;
const profile = process.env.BENCH_CPU_PROF;
const profiler = profile ? new Session() : undefined;
if (profiler) {
  profiler.connect();
  await profiler.post('Profiler.enable');
  await profiler.post('Profiler.setSamplingInterval', { interval: 1000 });
  await profiler.post('Profiler.start');
}

const MiB = 1024 * 1024;
function memoryMiB(): Record<string, number> {
  const m = process.memoryUsage();
  const round = (bytes: number) => Math.round(bytes / MiB);
  return {
    rss: round(m.rss),
    heapTotal: round(m.heapTotal),
    heapUsed: round(m.heapUsed),
    external: round(m.external),
    arrayBuffers: round(m.arrayBuffers),
    malloced: round(getHeapStatistics().malloced_memory),
  };
}

function cpuMs(): { user: number; system: number } {
  const { user, system } = process.cpuUsage();
  return { user: Math.round(user / 1000), system: Math.round(system / 1000) };
}

const heapProf = process.env.BENCH_HEAP_PROF;
const heapSession = heapProf ? new Session() : undefined;
if (heapSession) {
  heapSession.connect();
  await heapSession.post('HeapProfiler.enable');
  // Objects that outlived young-generation collections, dead or alive at the end: what grows the old generation.
  await heapSession.post('HeapProfiler.startSampling', { samplingInterval: 16384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: false } as never);
}

let worker: Worker;
if (trace || splitOnly) {
  const log = (line: object) => trace && appendFileSync(trace, `${JSON.stringify(line)}\n`);
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  if (trace) {
    let slots: SlotTimes[] = [];
    let released = 0;
    slotTraces.subscribe((times) => {
      if (released++ % 8 === 0) slots.push(times as SlotTimes);
    });
    setInterval(() => {
      log({
        t: Date.now(),
        loopMaxMs: loop.max / 1e6,
        loopMeanMs: loop.mean / 1e6,
        mem: memoryMiB(),
        cpuMs: cpuMs(),
        limiters: limiterSnapshots(),
        leaseReports: leaseReportsSent(),
        slots,
      });
      loop.reset();
      slots = [];
    }, 1000).unref();
  }
  limitHeapGrowth();
  const timing = (activity: string): ActivityInboundCallsInterceptor => ({
    async execute(input, next) {
      const started = Date.now();
      try {
        return await next(input);
      } finally {
        const stage = (input.args[0] as { stage?: string } | undefined)?.stage;
        log({ t: Date.now(), activity, stage, ms: Date.now() - started });
      }
    },
  });
  // Bundled in a child process, as createWorker does: bundling here would add ~200 MB to the peak RSS.
  const codePath = await prebuiltWorkflowBundle();
  const version = await workerDeploymentVersion({ codePath });
  worker = await withSmallWorkflowThreadHeap(() =>
    Worker.create({
      connection,
      namespace: settings.namespace,
      taskQueue: settings.taskQueue,
      activities,
      workflowBundle: { codePath },
      ...versionedWorkerOptions(version),
      maxConcurrentActivityTaskExecutions: max,
      interceptors: trace ? { activity: [(ctx) => ({ inbound: timing(ctx.info.activityType) })] } : {},
    }),
  );
  const traced = worker;
  currentOnceSeen(connection, settings.namespace, version, traced);
  const stopped = () => ['STOPPED', 'FAILED'].includes(traced.getState());
  if (splitOnly) splitAmongPollers(connection, settings.namespace, settings.taskQueue, stopped);
  else shareEndpointLimits(connection, settings.namespace, settings.taskQueue, stopped);
} else {
  worker = await createWorker({ connection, namespace: settings.namespace, taskQueue: settings.taskQueue, maxConcurrentActivities: max });
}
console.log(
  `worker polling task queue '${settings.taskQueue}' on ${settings.connection.address} (maxConcurrentActivities ${max}${trace ? `, trace ${trace}` : ''}${splitOnly ? ', limits split 1/N' : ''})`,
);
await worker.run();
if (storeCalls) await writeFile(storeCallsFile!, JSON.stringify(storeCalls()));
if (profiler) {
  const { profile: data } = await profiler.post('Profiler.stop');
  await writeFile(profile!, JSON.stringify(data));
}
if (heapSession) {
  const { profile: data } = await heapSession.post('HeapProfiler.stopSampling');
  await writeFile(heapProf!, JSON.stringify(data));
}
await connection.close();
