/**
 * Single-flight in a real build (llm/singleFlight.ts): two builds of the same samples started
 * together on one worker, sharing a model cache (`cacheUri`), ask every request at the same moment.
 * Counted by the simulator's admin counters: together they pay for exactly the requests one such
 * build alone pays for, and their reports count each paid request once.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BuildConfigInput } from '../../config/buildConfig.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import { LocalStore } from '../../storage/localStore.js';
import { writeCc3m } from '../fixtures/cc3m.js';
import { startStack, type Stack } from '../harness/stack.js';

let stack: Stack;
let dir: string;

before(async () => {
  stack = await startStack({ simulator: { seed: 5 }, taskQueue: 'mmif-single-flight' });
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-single-flight-'));
  await writeCc3m(new LocalStore(path.join(dir, 'cc3m')), 'files', { perShard: 4, shards: 2 });
});

after(async () => {
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The same samples and requests whatever the build id: only the output and the cache differ. */
const config = (buildId: string, cacheUri: string): BuildConfigInput => ({
  buildId,
  seed: 6,
  output: path.join(dir, buildId),
  cacheUri,
  sources: [{ type: 'cc3m', uri: path.join(dir, 'cc3m') }],
  maxSamples: 8,
  shardSize: 4,
  // The pre-flight is no pipeline call (it does not go through the model cache): left out of the count.
  llm: { preflight: false, prices: { 'mmif-sim-vlm': { inputPerMTok: 2, outputPerMTok: 8, batchDiscount: 0.5 } } },
  models: { default: { model: 'mmif-sim-vlm' } },
});

const run = async (input: BuildConfigInput) =>
  (await stack.client.workflow.execute('buildDataset', { taskQueue: stack.taskQueue, workflowId: input.buildId, args: [input] })) as BuildReport;

const total = (report: BuildReport) => {
  const usage = Object.values(report.usage);
  return { requests: usage.reduce((a, u) => a + u.requests, 0), cached: usage.reduce((a, u) => a + u.cachedRequests, 0), usd: usage.reduce((a, u) => a + u.costUsd, 0) };
};

test('two builds asking the same requests at the same moment pay for each once', async () => {
  // Latency keeps every request in flight long enough for its twin to arrive meanwhile.
  stack.simulator.setFaults({ latencyMs: 300 });
  try {
    stack.simulator.resetStats();
    const alone = total(await run(config('alone', path.join(dir, 'cache-alone'))));
    const once = stack.simulator.stats().completed;
    // Its own repeats (alike verifier selections, a blind answer that is a no_image rejected answer's request) are cache hits.
    assert.equal(once, alone.requests - alone.cached, 'a lone build with a fresh cache pays for every request it does not repeat');

    stack.simulator.resetStats();
    const shared = path.join(dir, 'cache-shared');
    const [a, b] = (await Promise.all([run(config('twin-a', shared)), run(config('twin-b', shared))])).map(total);
    const stats = stack.simulator.stats();
    assert.equal(stats.completed, once, 'the twins together reach the endpoint exactly as often as one build');
    assert.equal(stats.requests, once);
    // Each twin made every request the lone build made; the endpoint answered each once.
    assert.deepEqual([a!.requests, b!.requests], [alone.requests, alone.requests]);
    assert.equal(a!.requests - a!.cached + (b!.requests - b!.cached), once, 'the reports count each paid request once');
    assert.ok(Math.abs(a!.usd + b!.usd - alone.usd) < 1e-9, `the twins paid $${a!.usd} + $${b!.usd}, one build $${alone.usd}`);
  } finally {
    stack.simulator.setFaults({ latencyMs: 0 });
  }
});
