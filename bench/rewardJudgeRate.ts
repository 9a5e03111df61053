// Judged rewards: how much of the judge endpoint's limit `mmif reward serve` keeps busy, and what a
// repeated response costs. A simulated build (cc3m fixture, the judge's concurrency --limit) gives the
// ground truths; the service (its own process, as a user runs it) scores --responses distinct
// responses against the records' judged constraints, --clients requests of --batch items in flight,
// while the simulator (--latency ms a reply) is sampled every 10 ms for requests in flight. Then the
// same responses again: the judge's requests paid twice must be 0 (the model-call cache).
//
// Run:   npx tsx bench/rewardJudgeRate.ts [--limit 8] [--latency 1000] [--responses 200] [--clients 8] [--batch 4]
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import type { BuildConfigInput } from '../config/buildConfig.js';
import { groundTruthOf, type GroundTruth } from '../domain/groundTruth.js';
import type { BuildReport } from '../output/contracts/buildReport.js';
import { instructRecordFromLine } from '../output/formats/sharegpt.js';
import { LocalStore } from '../storage/localStore.js';
import { writeCc3m } from '../test/fixtures/cc3m.js';
import { readRecords } from '../test/harness/quickstartData.js';
import { startRewardService } from '../test/harness/rewardService.js';
import { startStack } from '../test/harness/stack.js';

const { values } = parseArgs({
  options: {
    limit: { type: 'string', default: '8' },
    latency: { type: 'string', default: '1000' },
    responses: { type: 'string', default: '200' },
    clients: { type: 'string', default: '8' },
    batch: { type: 'string', default: '4' },
  },
});
const [limit, latency, responses, clients, batch] = [values.limit, values.latency, values.responses, values.clients, values.batch].map(Number) as [
  number,
  number,
  number,
  number,
  number,
];

const stack = await startStack({ simulator: { seed: 5 }, taskQueue: 'mmif-bench-rewards' });
const dir = await mkdtemp(path.join(tmpdir(), 'mmif-bench-rewards-'));
try {
  await writeCc3m(new LocalStore(path.join(dir, 'cc3m')), 'files', { perShard: 6, shards: 2 });
  const config: BuildConfigInput = {
    buildId: 'rewards',
    seed: 3,
    output: path.join(dir, 'out'),
    sources: [{ type: 'cc3m', uri: path.join(dir, 'cc3m') }],
    maxSamples: 12,
    shardSize: 6,
    models: { default: { model: 'mmif-sim-vlm', concurrency: limit } },
  };
  const report = (await stack.client.workflow.execute('buildDataset', { taskQueue: stack.taskQueue, workflowId: 'rewards', args: [config] })) as BuildReport;
  const root = path.join(dir, 'out', 'rewards');
  const truths = (await readRecords(root, 'instruct/sharegpt', instructRecordFromLine))
    .map((r) => groundTruthOf(r, 'fail'))
    .filter((t) => t.constraints.some((c) => c.method !== 'rule'));
  if (truths.length === 0) throw new Error(`the build (${report.counts.instruct} records) has no judged constraint to score`);
  // Distinct responses: each truth's constraints against a text of its own.
  const items = Array.from({ length: responses }, (_, i) => ({
    ground_truth: truths[i % truths.length]! as GroundTruth,
    response: `Response ${i}: the picture shows a scene worth describing in a few plain sentences.`,
  }));
  stack.simulator.setFaults({ latencyMs: latency });
  // The build's own judge (models.default: the simulator through OPENAI_BASE_URL, `limit` in flight).
  const service = await startRewardService(['--data', root]);
  try {
    const run = async () => {
      const before = stack.simulator.stats().requests;
      const samples: number[] = [];
      let sending = true;
      const sampler = (async () => {
        while (sending) {
          samples.push(stack.simulator.stats().inFlight);
          await sleep(10);
        }
      })();
      let next = 0;
      const started = performance.now();
      let lastSent = started;
      await Promise.all(
        Array.from({ length: clients }, async () => {
          while (next < items.length) {
            const chunk = items.slice(next, next + batch);
            next += batch;
            if (next >= items.length) lastSent = performance.now();
            const { status, body } = await service.post('/v1/rewards', { items: chunk });
            if (status !== 200) throw new Error(`reward service answered ${status}: ${JSON.stringify(body)}`);
          }
        }),
      );
      sending = false;
      await sampler;
      const wall = (performance.now() - started) / 1000;
      // Steady state: until the last batch went out (the tail then drains with fewer in flight).
      const steady = samples.slice(0, Math.max(1, Math.floor((samples.length * (lastSent - started)) / (wall * 1000))));
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
      return { requests: stack.simulator.stats().requests - before, wall, share: mean(samples) / limit, steadyShare: mean(steady) / limit };
    };
    const first = await run();
    const again = await run();
    console.log(
      `judge limit ${limit} in flight, ${latency} ms a reply; ${responses} distinct responses over ${truths.length} ground truths with judged constraints; ${clients} clients x ${batch} items`,
    );
    console.log(
      `first pass: ${first.requests} judge requests in ${first.wall.toFixed(1)} s; limit in use ${(100 * first.steadyShare).toFixed(1)}% until the last batch was sent, ${(100 * first.share).toFixed(1)}% over the whole pass`,
    );
    console.log(`same responses again: ${again.requests} judge requests (paid twice), ${again.wall.toFixed(1)} s`);
  } finally {
    await service.stop();
  }
} finally {
  await stack.stop();
  await rm(dir, { recursive: true, force: true });
}
