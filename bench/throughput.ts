// Model-call throughput of a real build: a Temporal dev server, the simulator over HTTP with a fixed
// latency and a cap C (429 above C in flight; also `models.default.concurrency`), and `mmif worker`
// processes building a CC3M `flat` folder of procedural JPEGs; the limit is C / latency requests/s.
// Scenarios (the `all` list below): 1, 2 or 4 workers with tuned or shipped settings, the cap split 1/N
// or by hand, an RPM endpoint (`rpm-*`, x-ratelimit-* headers), and `one` with metrics or OTLP traces on
// (`one-metrics`, `one-traces`: run after `one`, their CPU per request against its is the telemetry's cost).
// Measured over the steady state (middle 80% of completions): requests/s against the limit, in flight,
// 429s, worker CPU per sample and request (/proc) and peak RSS. How: bench/notes/2026-11-21-common-setup.md.
// Run:   npx tsx bench/throughput.ts [--only one,four] [--samples 1000]
//        ... --only one,one-metrics,one-traces [--repeat 2] (the cost of metrics and traces, pairs in turn)
//        ... --trace /tmp/t (per-activity times, event-loop delay: benchWorker.ts)
//        ... --cpu-prof /tmp/p (each worker's V8 CPU profile: profileSummary.ts)
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { freePort, startTemporalDevServer, type DevServer } from '../local/temporalDevServer.js';
import { startOtlpReceiver } from '../test/harness/otlpReceiver.js';
import type { BuildReport } from '../output/contracts/buildReport.js';
import {
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
  type SteadyState,
  type Tick,
} from './harness.js';
import { sampleLanes, shardsToFeedLanes } from '../domain/sampleLanes.js';
import { DEFAULT_ACTIVITY_SLOTS } from '../worker/createWorker.js';

const { values } = parseArgs({
  options: {
    only: { type: 'string' }, // comma-separated: one, one-metrics, one-traces, defaults, two, four, four-split, two-split, two-uncapped, rpm-one, rpm-two, rpm-four
    samples: { type: 'string', default: '2000' },
    'samples-defaults': { type: 'string', default: '512' },
    'samples-two': { type: 'string', default: '768' },
    'samples-uncapped': { type: 'string', default: '400' },
    concurrency: { type: 'string', default: '128' },
    'latency-ms': { type: 'string', default: '1000' },
    'slice-size': { type: 'string', default: '32' },
    'llm-concurrency': { type: 'string', default: '32' },
    'shard-size': { type: 'string', default: '128' },
    'parallel-shards': { type: 'string', default: '8' },
    /** Worker maxConcurrentActivities; unset = the real `mmif worker` (DEFAULT_ACTIVITY_SLOTS). */
    activities: { type: 'string' },
    compliance: { type: 'string', default: '0.9' },
    leniency: { type: 'string', default: '0.9' },
    json: { type: 'string' },
    /** Runs the chosen scenarios this many times, in turn (one, one-metrics, one, one-metrics, ...): on/off pairs under the same load. */
    repeat: { type: 'string', default: '1' },
    /** Diagnostic: run bench/benchWorker.ts with BENCH_TRACE=<this>.<scenario>.<n>.jsonl (activity times, event-loop delay). */
    trace: { type: 'string' },
    /** Diagnostic: a V8 CPU profile of each worker, <this>.<scenario>.<n>.cpuprofile (bench/profileSummary.ts). */
    'cpu-prof': { type: 'string' },
  },
});

const C = Number(values.concurrency);
const LATENCY_MS = Number(values['latency-ms']);
const CORES = cpus().length;
const LIMIT = C / (LATENCY_MS / 1000);
const ACTIVITIES = values.activities === undefined ? DEFAULT_ACTIVITY_SLOTS : Number(values.activities);

interface Scenario {
  name: string;
  workers: number;
  samples: number;
  /** Simulator maxConcurrent: C, or 0 (no provider cap). */
  simulatorCap: number;
  /** Simulator requests-per-minute limit with x-ratelimit-* headers (0 = none). */
  simulatorRpm?: number;
  /** Workers split endpoint limits 1/N only, without concurrency leases (bench/benchWorker.ts BENCH_SPLIT_ONLY). */
  splitOnly?: boolean;
  /** The workers' telemetry: Prometheus metrics served and scraped, or traces sent over OTLP (default: neither). */
  telemetry?: 'metrics' | 'traces';
  settings: BenchBuildSettings;
}

/** How often the bench scrapes a worker's metrics (Prometheus' default is 60 s; 15 s is common). */
const SCRAPE_EVERY_MS = 5_000;

/**
 * A scenario's telemetry while it runs: per worker, its metrics address or OTLP environment; the
 * scraper or receiver behind them; and what it took in (scrapes, OTLP exports).
 */
async function telemetryFor(scenario: Scenario): Promise<{ worker: () => Promise<{ metricsAt?: string; env?: NodeJS.ProcessEnv }>; stop: () => Promise<string> }> {
  if (scenario.telemetry === 'traces') {
    const receiver = await startOtlpReceiver();
    return {
      worker: async () => ({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url } }),
      stop: async () => {
        const exports = receiver.bodies();
        await receiver.close();
        return `${exports.length} OTLP exports, ${fmt(exports.reduce((n, b) => n + b.length, 0) / 2 ** 20)} MiB`;
      },
    };
  }
  if (scenario.telemetry === 'metrics') {
    const targets: string[] = [];
    let scrapes = 0;
    const timer = setInterval(() => {
      for (const at of targets)
        void fetch(`http://${at}/metrics`).then(
          (r) => r.text().then(() => (scrapes += 1)),
          () => {},
        );
    }, SCRAPE_EVERY_MS);
    return {
      worker: async () => {
        const metricsAt = `127.0.0.1:${await freePort()}`;
        targets.push(metricsAt);
        return { metricsAt };
      },
      stop: async () => {
        clearInterval(timer);
        return `${scrapes} scrapes`;
      },
    };
  }
  return { worker: async () => ({}), stop: async () => '' };
}

interface Result {
  scenario: Scenario;
  wallSeconds: number;
  report: BuildReport;
  steady: SteadyState;
  requests: number;
  completed: number;
  r429: number;
  maxInFlight: number;
  workerCpuMs: number[];
  workerPeakRssMiB: number[];
  simulatorCpuMs: number;
  temporalCpuMs: number;
  ticks: Tick[];
  /** What the telemetry took in (scrapes, OTLP exports), when it was on. */
  telemetry: string;
}

async function runScenario(server: DevServer, sim: SimulatorProc, client: Client, images: string, scenario: Scenario): Promise<Result> {
  const output = await mkdtemp(path.join(tmpdir(), 'mmif-bench-out-'));
  const taskQueue = `bench-${scenario.name}`;
  const activities = values.activities === undefined ? undefined : Number(values.activities);
  const workers: Proc[] = [];
  const telemetry = await telemetryFor(scenario);
  let took = '';
  try {
    for (let i = 0; i < scenario.workers; i++) {
      const trace = values.trace ? `${values.trace}.${scenario.name}.${i}.jsonl` : undefined;
      const cpuProfile = values['cpu-prof'] ? `${values['cpu-prof']}.${scenario.name}.${i}.cpuprofile` : undefined;
      workers.push(
        await startWorkerProcess({
          address: server.address,
          taskQueue,
          simulatorUrl: sim.url,
          maxConcurrentActivities: activities,
          trace,
          cpuProfile,
          splitOnly: scenario.splitOnly,
          ...(await telemetry.worker()),
        }),
      );
    }
    await fetch(`${sim.admin}/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ maxConcurrent: scenario.simulatorCap, rateLimitRequests: scenario.simulatorRpm ?? 0 }),
    });
    await resetSim(sim);
    const cpu0 = workers.map((w) => procUsage(w.pid)!.cpuMs);
    const sim0 = procUsage(sim.pid)!.cpuMs;
    const tmp0 = procUsage(server.process.pid!)!.cpuMs;
    const poller = pollSimulator(sim, [...workers.map((w) => w.pid), sim.pid, server.process.pid!]);
    const started = Date.now();
    const report = (await client.workflow.execute('buildDataset', {
      taskQueue,
      workflowId: `bench-${scenario.name}`,
      args: [benchBuildConfig(`bench-${scenario.name}`, output, images, scenario.samples, scenario.settings)],
    })) as BuildReport;
    const wallSeconds = (Date.now() - started) / 1000;
    const ticks = await poller.stop();
    const usage = workers.map((w) => procUsage(w.pid)!);
    const stats = await simStats(sim);
    took = await telemetry.stop();
    return {
      scenario,
      wallSeconds,
      report,
      steady: steadyState(ticks, CORES),
      requests: stats.requests,
      completed: stats.completed,
      r429: stats.byStatus['429'] ?? 0,
      maxInFlight: stats.maxInFlight,
      workerCpuMs: usage.map((u, i) => u.cpuMs - cpu0[i]!),
      workerPeakRssMiB: usage.map((u) => u.peakRssMiB),
      simulatorCpuMs: procUsage(sim.pid)!.cpuMs - sim0,
      temporalCpuMs: procUsage(server.process.pid!)!.cpuMs - tmp0,
      ticks,
      telemetry: took,
    };
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    if (!took) await telemetry.stop();
    await rm(output, { recursive: true, force: true });
  }
}

function describe(r: Result): void {
  const s = r.steady;
  const cpu = r.workerCpuMs.reduce((a, b) => a + b, 0);
  console.log(
    `\n[${r.scenario.name}] ${r.scenario.workers} worker(s), ${r.scenario.samples} samples, simulator cap ${r.scenario.simulatorCap || 'off'}${r.scenario.simulatorRpm ? `, ${r.scenario.simulatorRpm} requests/min` : ''}: ` +
      `${fmt(r.wallSeconds)} s; ${r.completed} completed requests (${fmt(r.completed / r.scenario.samples, 2)}/sample), ${r.r429} x 429; ` +
      `steady ${fmt(s.requestsPerSecond)} req/s (${fmt((100 * s.requestsPerSecond) / LIMIT)}% of ${fmt(LIMIT)}), mean in flight ${fmt(s.meanInFlight)}, ` +
      `machine CPU ${fmt(100 * s.machineCpuShare)}% (of one core: workers ${s.cpuShare
        .slice(0, -2)
        .map((c) => fmt(100 * c, 0) + '%')
        .join(' + ')}, simulator ${fmt(100 * s.cpuShare.at(-2)!, 0)}%, temporal ${fmt(100 * s.cpuShare.at(-1)!, 0)}%); worker CPU ${fmt(cpu / r.scenario.samples, 2)} ms/sample ` +
      `(${fmt(cpu / r.completed, 2)} ms/request), peak RSS ${r.workerPeakRssMiB.map((m) => fmt(m, 0)).join(' + ')} MiB; ` +
      `simulator CPU ${fmt(r.simulatorCpuMs / r.completed, 2)} ms/request; temporal ${fmt(r.temporalCpuMs / 1000)} s`,
  );
  if (r.telemetry) console.log(`  telemetry: ${r.scenario.telemetry}, ${r.telemetry}`);
  console.log(`  report: shards ${JSON.stringify(r.report.shards)}, counts ${JSON.stringify(r.report.counts)}, rejects by stage ${JSON.stringify(r.report.rejectsByStage)}`);
}

/** The workers' CPU (user + system) per request the simulator completed, ms. */
function cpuPerRequest(r: Result): number {
  return r.workerCpuMs.reduce((a, b) => a + b, 0) / r.completed;
}

/**
 * The sample lanes a build can have in flight (a sample makes one model call at a time): the
 * worker's lanes for the build, 4 per endpoint slot split over the workers (domain/sampleLanes.ts),
 * fed by the samples of the running slice activities = min(shards in flight x 4 slices per shard,
 * workers x maxConcurrentActivities) x sliceSize.
 */
function parallelism(sc: Scenario): string {
  const s = sc.settings;
  const shards = s.maxParallelShards ?? shardsToFeedLanes(s.concurrency, { shardSize: s.shardSize, sliceSize: s.sliceSize, parallelSlices: 4 });
  const dispatched = Math.min(shards * 4, sc.workers * ACTIVITIES) * s.sliceSize;
  return `${sampleLanes(s.concurrency)} lanes, ${shards} shards x 4 slices x ${s.sliceSize} = ${dispatched} samples dispatched`;
}

async function main(): Promise<void> {
  const tuned: BenchBuildSettings = {
    concurrency: C,
    shardSize: Number(values['shard-size']),
    sliceSize: Number(values['slice-size']),
    maxParallelShards: Number(values['parallel-shards']),
    llmConcurrency: Number(values['llm-concurrency']),
  };
  // The shipped defaults: shardSize 64, sliceSize 16, shards in flight and lanes from the endpoint's concurrency.
  const defaults: BenchBuildSettings = { concurrency: C, shardSize: 64, sliceSize: 16 };
  const all: Scenario[] = [
    { name: 'one', workers: 1, samples: Number(values.samples), simulatorCap: C, settings: tuned },
    { name: 'one-metrics', workers: 1, samples: Number(values.samples), simulatorCap: C, settings: tuned, telemetry: 'metrics' as const },
    { name: 'one-traces', workers: 1, samples: Number(values.samples), simulatorCap: C, settings: tuned, telemetry: 'traces' as const },
    { name: 'defaults', workers: 1, samples: Number(values['samples-defaults']), simulatorCap: C, settings: defaults },
    { name: 'two', workers: 2, samples: Number(values['samples-two']), simulatorCap: C, settings: tuned },
    { name: 'four', workers: 4, samples: Number(values['samples-two']), simulatorCap: C, settings: tuned },
    // As before concurrency leases: each worker admits 1/4 of C whatever its demand.
    { name: 'four-split', workers: 4, samples: Number(values['samples-two']), simulatorCap: C, settings: tuned, splitOnly: true },
    // The cap split by hand: each worker's limiter gets C/2, so together they send at most C.
    { name: 'two-split', workers: 2, samples: Number(values['samples-two']), simulatorCap: C, settings: { ...tuned, concurrency: Math.floor(C / 2) } },
    { name: 'two-uncapped', workers: 2, samples: Number(values['samples-uncapped']), simulatorCap: 0, settings: tuned },
    // Rate-limited, not concurrency-limited: the configured concurrency (4C) never binds.
    ...[1, 2, 4].map((workers) => ({
      name: `rpm-${['', 'one', 'two', '', 'four'][workers]}`,
      workers,
      samples: Number(values['samples-two']),
      simulatorCap: 0,
      simulatorRpm: Math.round(LIMIT * 60),
      settings: { ...tuned, concurrency: 4 * C },
    })),
  ];
  const chosen = values.only ? all.filter((s) => values.only!.split(',').includes(s.name)) : all;
  const scenarios = Array.from({ length: Number(values.repeat) }, () => chosen).flat();
  const maxSamples = Math.max(...scenarios.map((s) => s.samples));
  console.log(`machine: ${CORES} cores; C = ${C}, latency ${LATENCY_MS} ms -> limit ${fmt(LIMIT)} req/s; images: ${maxSamples} x 256x256`);
  const t0 = Date.now();
  const images = await ensureImages(maxSamples, 256);
  console.log(`images ready in ${fmt((Date.now() - t0) / 1000)} s: ${images}`);

  const [server, sim] = await Promise.all([
    startTemporalDevServer(),
    startSimulatorProcess({ latencyMs: LATENCY_MS, maxConcurrent: C, complianceRate: Number(values.compliance), judgeLeniency: Number(values.leniency), seed: 3 }),
  ]);
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection });
  const results: Result[] = [];
  try {
    for (const scenario of scenarios) {
      const result = await runScenario(server, sim, client, images, scenario);
      describe(result);
      results.push(result);
    }
  } finally {
    await connection.close();
    await server.stop();
    await sim.stop();
  }

  console.log(`\nSummary (C = ${C}, latency ${LATENCY_MS} ms, limit ${fmt(LIMIT)} req/s; steady state = middle 80% of completed requests)\n`);
  console.log(
    table(
      [
        'scenario',
        'lanes',
        'samples',
        'wall s',
        'requests',
        'req/sample',
        'steady req/s',
        '% of limit',
        '429s (% of requests)',
        'sim max in flight',
        'worker CPU ms/sample',
        'worker CPU ms/request',
        'worker peak RSS MiB',
        'machine CPU',
      ],
      results.map((r) => [
        `${r.scenario.name}: ${r.scenario.workers} worker${r.scenario.workers > 1 ? 's' : ''} x concurrency ${r.scenario.settings.concurrency}, sim cap ${r.scenario.simulatorCap || 'off'}${r.scenario.simulatorRpm ? `, ${r.scenario.simulatorRpm} req/min` : ''}`,
        parallelism(r.scenario),
        r.scenario.samples,
        fmt(r.wallSeconds, 0),
        r.completed,
        fmt(r.completed / r.scenario.samples, 2),
        fmt(r.steady.requestsPerSecond),
        `${fmt((100 * r.steady.requestsPerSecond) / LIMIT)}%`,
        `${r.r429} (${fmt((100 * r.r429) / Math.max(1, r.requests), 2)}%)`,
        r.maxInFlight,
        fmt(r.workerCpuMs.reduce((a, b) => a + b, 0) / r.scenario.samples, 1),
        fmt(cpuPerRequest(r), 3),
        r.workerPeakRssMiB.map((m) => fmt(m, 0)).join(' + '),
        `${fmt(100 * r.steady.machineCpuShare, 0)}%`,
      ]),
    ),
  );
  // The telemetry's cost: CPU per request against `one`'s in this run (the repetitions of each together).
  const perRequest = (name: string) => {
    const runs = results.filter((r) => r.scenario.name === name);
    return runs.reduce((ms, r) => ms + r.workerCpuMs.reduce((x, y) => x + y, 0), 0) / runs.reduce((n, r) => n + r.completed, 0);
  };
  for (const name of new Set(results.filter((r) => r.scenario.telemetry).map((r) => r.scenario.name))) {
    if (!results.some((r) => r.scenario.name === 'one')) console.log(`\n${name}: run \`one\` in the same sitting to compare`);
    else
      console.log(
        `\n${name}: worker CPU ${fmt(perRequest(name), 3)} vs ${fmt(perRequest('one'), 3)} ms/request without: ${fmt(100 * (perRequest(name) / perRequest('one') - 1), 1)}%`,
      );
  }
  if (values.json) {
    const { writeFile } = await import('node:fs/promises');
    await writeFile(
      values.json,
      JSON.stringify(
        results.map(({ report: _r, ...rest }) => rest),
        null,
        1,
      ),
    );
  }
}

await main();
