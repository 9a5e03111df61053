// Identical model requests a build pays for more than once: a real build (Temporal dev server,
// `mmif worker`, the simulator) through bench/countingProxy.ts, which keys every answered request by
// its body bytes. The model-call cache serves an identical request made after the first reply is
// stored, and single-flight (llm/singleFlight.ts) one identical to a request in flight in the same
// worker process; identical requests in flight at the same time in two worker processes both reach
// the endpoint (`--workers 2` measures how often). Prints the answered requests, the distinct ones
// and the extra answers by kind of request.
//
// Run:   npx tsx bench/duplicates.ts [--samples 512] [--concurrency 128] [--latency-ms 1000] [--workers 1]
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { startTemporalDevServer } from '../local/temporalDevServer.js';
import type { BuildReport } from '../output/contracts/buildReport.js';
import { startCountingProxy } from './countingProxy.js';
import { benchBuildConfig, ensureImages, fmt, simStats, startSimulatorProcess, startWorkerProcess, table } from './harness.js';

const { values } = parseArgs({
  options: {
    samples: { type: 'string', default: '512' },
    concurrency: { type: 'string', default: '128' },
    'latency-ms': { type: 'string', default: '1000' },
    workers: { type: 'string', default: '1' },
  },
});
const SAMPLES = Number(values.samples);
const C = Number(values.concurrency);

const images = await ensureImages(SAMPLES, 256);
const [server, sim] = await Promise.all([startTemporalDevServer(), startSimulatorProcess({ latencyMs: Number(values['latency-ms']), maxConcurrent: C, seed: 3 })]);
const proxy = await startCountingProxy(sim.url);
const output = await mkdtemp(path.join(tmpdir(), 'mmif-bench-dups-'));
const connection = await Connection.connect({ address: server.address });
const workers = await Promise.all(
  Array.from({ length: Number(values.workers) }, () => startWorkerProcess({ address: server.address, taskQueue: 'dups', simulatorUrl: proxy.url })),
);
try {
  const config = benchBuildConfig('dups', output, images, SAMPLES, { concurrency: C, shardSize: 128, sliceSize: 32, maxParallelShards: 8, llmConcurrency: 32 });
  const report = (await new Client({ connection }).workflow.execute('buildDataset', { taskQueue: 'dups', workflowId: config.buildId, args: [config] })) as BuildReport;
  const stats = await simStats(sim);
  const counts = proxy.counts();
  const cached = Object.values(report.usage).reduce((a, u) => a + u.cachedRequests, 0);
  console.log(
    `${SAMPLES} samples, ${workers.length} worker(s): ${stats.completed} requests answered, ${counts.doneBeforeKill} distinct, ` +
      `${counts.duplicatesWithinPhase} answered again (${fmt((100 * counts.duplicatesWithinPhase) / stats.completed, 2)}% of all answers); ` +
      `cache hits in the build report: ${cached}\n`,
  );
  console.log(table(['request kind', 'extra answers'], proxy.duplicatesByKind().slice(0, 15)));
} finally {
  await Promise.all(workers.map((w) => w.stop()));
  await connection.close();
  await proxy.close();
  await server.stop();
  await sim.stop();
  await rm(output, { recursive: true, force: true });
}
