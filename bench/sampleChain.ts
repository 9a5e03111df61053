// A sample's chain of dependent model calls, as wall time: every sample of a shard runs through the
// stages at once, each as its own slice (runSliceStages), against the simulator as GPUs of the
// published Qwen2.5-VL-7B profile with more slots than the samples ever fill (latency from each
// reply's output length and GPU work, simulator/gpuProfile.ts; nothing queues). A sample's wall time
// is then its critical path; the slowest samples' set the build's tail (ADR 0074). Reports each
// sample's wall time (mean, p50, p90, max), the requests sent and the records kept.
//
// Run:   npx tsx bench/sampleChain.ts [--samples 64] [--speedup 32] [--gpus 2]
import { parseArgs } from 'node:util';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { contextFor, richnessTools } from '../activities/runtime.js';
import { shardPlanIn } from '../activities/shardPlan.js';
import { parseBuildConfig } from '../config/buildConfig.js';
import { STAGE_NAMES, sampleFates } from '../config/stages.js';
import { makeBuildPlan } from '../pipeline/planning/planBuild.js';
import { runSliceStages } from '../pipeline/run/runStage.js';
import { GPU_PROFILES, GpuFleet } from '../simulator/gpuProfile.js';
import { startSimulator } from '../simulator/server.js';
import { ensureImages, loadAverage, quantile } from './harness.js';

const { values } = parseArgs({ options: { samples: { type: 'string', default: '64' }, speedup: { type: 'string', default: '32' }, gpus: { type: 'string', default: '2' } } });
const SAMPLES = Number(values.samples);
const PROFILE = GPU_PROFILES['qwen2.5-vl-7b'];
const GPUS = Number(values.gpus);

const images = await ensureImages(SAMPLES);
const dir = await mkdtemp(path.join(tmpdir(), 'mmif-bench-sample-chain-'));
const sim = await startSimulator({ seed: 5, gpus: new GpuFleet(PROFILE, GPUS, Number(values.speedup)) });
try {
  const config = parseBuildConfig({
    buildId: 'sample-chain',
    seed: 3,
    output: path.join(dir, 'out'),
    sources: [{ type: 'cc3m', uri: images }],
    maxSamples: SAMPLES,
    shardSize: SAMPLES,
    models: { default: { model: 'mmif-sim-vlm', baseUrl: sim.url, concurrency: GPUS * PROFILE.slots } },
    llm: { preflight: false },
  });
  const ctx = contextFor(config);
  await makeBuildPlan(config, ctx.store, ctx.layout, ctx.sources, richnessTools(ctx));
  const samples = await shardPlanIn(ctx.store, ctx.layout, 0);
  const loadBefore = loadAverage();
  sim.resetStats();
  const started = Date.now();
  const runs = await Promise.all(
    samples.map(async (sample) => {
      const t0 = Date.now();
      const outcome = await runSliceStages(ctx, STAGE_NAMES, [sample]);
      return { seconds: (Date.now() - t0) / 1000, outcome };
    }),
  );
  const wall = (Date.now() - started) / 1000;
  const stats = sim.stats();
  const seconds = runs.map((r) => r.seconds).sort((a, b) => a - b);
  let instruct = 0;
  let dpo = 0;
  for (const { outcome } of runs) {
    instruct += sampleFates(outcome.stages, STAGE_NAMES).accepted;
    dpo += outcome.stages.rejected?.ok ?? 0;
  }
  console.log({
    samples: samples.length,
    speedup: Number(values.speedup),
    sampleSeconds: {
      mean: (seconds.reduce((a, b) => a + b, 0) / seconds.length).toFixed(2),
      p50: quantile(seconds, 0.5).toFixed(2),
      p90: quantile(seconds, 0.9).toFixed(2),
      max: seconds.at(-1)!.toFixed(2),
    },
    wall: wall.toFixed(1),
    requests: stats.requests,
    maxInFlight: stats.maxInFlight,
    records: { instruct, dpo },
    requestsPerRecord: (stats.requests / (instruct + dpo)).toFixed(2),
    load: `${loadBefore} -> ${loadAverage()}`,
  });
} finally {
  await sim.close();
  await rm(dir, { recursive: true, force: true });
}
