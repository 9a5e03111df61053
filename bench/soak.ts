/**
 * Soak: one worker process (`mmif worker`, as shipped) serves --builds consecutive dated builds, as
 * a schedule runs them (workflows/scheduledBuild.ts: output `<base>/<YYYY-MM-DD>`, the model-call
 * cache shared under the base output, workflow id `<buildId>@<date>`), each with its own seed, so it
 * draws other samples of the image folder and pays for new model calls. After each build the
 * worker's RSS is read from /proc. Flat means the per-worker memos (activities/runtime.ts: stores,
 * build contexts and their source readers, budgets) stop growing once their LRU bounds are reached.
 *
 * Run: npx tsx bench/soak.ts [--builds 50] [--samples 16]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { startTemporalDevServer } from '../local/temporalDevServer.js';
import { benchBuildConfig, ensureImages, fmt, procUsage, startSimulatorProcess, startWorkerProcess, table } from './harness.js';

const { values } = parseArgs({ options: { builds: { type: 'string', default: '50' }, samples: { type: 'string', default: '16' } } });
const BUILDS = Number(values.builds);
const SAMPLES = Number(values.samples);
const TASK_QUEUE = 'bench-soak';

const images = await ensureImages(400, 256);
const dir = await mkdtemp(path.join(tmpdir(), 'mmif-bench-soak-'));
const [server, sim] = await Promise.all([startTemporalDevServer(), startSimulatorProcess({ latencyMs: 20, seed: 3 })]);
const worker = await startWorkerProcess({ address: server.address, taskQueue: TASK_QUEUE, simulatorUrl: sim.url });
const connection = await Connection.connect({ address: server.address });
const client = new Client({ connection });
const rows: Array<{ build: number; date: string; seconds: number; accepted: number; rssMiB: number }> = [];
try {
  const base = path.join(dir, 'out');
  for (let i = 0; i < BUILDS; i++) {
    const date = new Date(Date.UTC(2026, 0, 1 + i)).toISOString().slice(0, 10);
    const config = {
      ...benchBuildConfig('soak', `${base}/${date}`, images, SAMPLES, { concurrency: 16, shardSize: 8, sliceSize: 4, maxParallelShards: 2, llmConcurrency: 8 }),
      cacheUri: base,
      seed: i + 1,
    };
    const started = Date.now();
    const report = (await client.workflow.execute('buildDataset', { taskQueue: TASK_QUEUE, workflowId: `soak@${date}`, args: [config] })) as { counts: { instruct: number } };
    const usage = procUsage(worker.pid)!;
    rows.push({ build: i + 1, date, seconds: (Date.now() - started) / 1000, accepted: report.counts.instruct, rssMiB: usage.rssMiB });
    console.log(
      `build ${i + 1} (${date}): ${report.counts.instruct} accepted in ${fmt((Date.now() - started) / 1000)} s, worker RSS ${fmt(usage.rssMiB)} MiB (peak ${fmt(usage.peakRssMiB)})`,
    );
  }
} finally {
  await connection.close();
  await worker.stop();
  await server.stop();
  await sim.stop();
  await rm(dir, { recursive: true, force: true });
}

/** Least-squares slope of RSS against the build number, MiB per build. */
function slope(points: typeof rows): number {
  const n = points.length;
  const mx = points.reduce((s, p) => s + p.build, 0) / n;
  const my = points.reduce((s, p) => s + p.rssMiB, 0) / n;
  const num = points.reduce((s, p) => s + (p.build - mx) * (p.rssMiB - my), 0);
  const den = points.reduce((s, p) => s + (p.build - mx) ** 2, 0);
  return num / den;
}
const half = rows.slice(Math.floor(rows.length / 2));
const mean = (points: typeof rows) => points.reduce((s, p) => s + p.rssMiB, 0) / points.length;
console.log(`\n${BUILDS} dated builds of ${SAMPLES} samples on one worker\n`);
console.log(
  table(
    ['builds', 'mean worker RSS MiB'],
    [1, 11, 21, 31, 41].filter((b) => b <= rows.length).map((b) => [`${b}-${Math.min(b + 9, rows.length)}`, fmt(mean(rows.slice(b - 1, b + 9)))]),
  ),
);
console.log(
  `\nRSS slope over the second half (builds ${half[0]?.build}-${rows.at(-1)?.build}): ${fmt(slope(half), 2)} MiB per build; over all: ${fmt(slope(rows), 2)} MiB per build`,
);
