// One shard's slices run stage by stage (runStage per stage: each stage waits for the slice's slowest
// sample, as a Batch API shard still runs) against the same slices
// with each sample flowing through the stages on its own (runSliceStages), in one process against
// the simulator serving as one GPU of the published Qwen2.5-VL-7B profile (latency from each reply's
// output length, simulator/gpuProfile.ts). Each run has its own output and model cache. Reports wall
// time, requests, the GPU's mean requests in flight (its stats polled every 100 ms) and the process's CPU time.
//
// Run:   npx tsx bench/sliceFlow.ts [--samples 128] [--slice 32] [--speedup 8]
import { parseArgs } from 'node:util';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { contextFor, richnessTools } from '../activities/runtime.js';
import { shardPlanIn } from '../activities/shardPlan.js';
import { parseBuildConfig } from '../config/buildConfig.js';
import { mapLimit } from '../domain/mapLimit.js';
import { STAGE_NAMES } from '../config/stages.js';
import { makeBuildPlan } from '../pipeline/planning/planBuild.js';
import { runSliceStages, runStage } from '../pipeline/run/runStage.js';
import { GPU_PROFILES, GpuFleet } from '../simulator/gpuProfile.js';
import { startSimulator } from '../simulator/server.js';
import type { SourceSample } from '../domain/sample.js';
import type { StageContext } from '../pipeline/run/context.js';
import { ensureImages, loadAverage } from './harness.js';

const { values } = parseArgs({ options: { samples: { type: 'string', default: '128' }, slice: { type: 'string', default: '32' }, speedup: { type: 'string', default: '8' } } });
const SAMPLES = Number(values.samples);
const SLICE = Number(values.slice);
const PARALLEL_SLICES = 4; // as a shard runs them (workflows/buildDataset.ts)

const images = await ensureImages(SAMPLES);
const dir = await mkdtemp(path.join(tmpdir(), 'mmif-bench-slice-flow-'));
const sim = await startSimulator({ seed: 5, gpus: new GpuFleet(GPU_PROFILES['qwen2.5-vl-7b'], 1, Number(values.speedup)) });
try {
  const measure = async (name: string, run: (ctx: StageContext, slice: readonly SourceSample[]) => Promise<unknown>) => {
    const config = parseBuildConfig({
      buildId: 'slice-flow',
      seed: 3,
      output: path.join(dir, name),
      sources: [{ type: 'cc3m', uri: images }],
      maxSamples: SAMPLES,
      shardSize: SAMPLES,
      sliceSize: SLICE,
      // The GPU's slots: the endpoint's cap never binds before the lanes do.
      models: { default: { model: 'mmif-sim-vlm', baseUrl: sim.url, concurrency: GPU_PROFILES['qwen2.5-vl-7b'].slots } },
      llm: { concurrency: SLICE, preflight: false },
    });
    const ctx = contextFor(config);
    await makeBuildPlan(config, ctx.store, ctx.layout, ctx.sources, richnessTools(ctx));
    const samples = await shardPlanIn(ctx.store, ctx.layout, 0);
    const slices = Array.from({ length: Math.ceil(samples.length / SLICE) }, (_, i) => samples.slice(i * SLICE, (i + 1) * SLICE));
    sim.resetStats();
    let inFlightSum = 0;
    let ticks = 0;
    const poll = setInterval(() => {
      inFlightSum += sim.stats().inFlight;
      ticks++;
    }, 100);
    const loadBefore = loadAverage();
    const started = Date.now();
    const cpu = process.cpuUsage();
    await mapLimit(slices, PARALLEL_SLICES, (slice) => run(ctx, slice));
    const seconds = (Date.now() - started) / 1000;
    const { user, system } = process.cpuUsage(cpu);
    clearInterval(poll);
    const stats = sim.stats();
    return {
      run: name,
      samples: samples.length,
      seconds: seconds.toFixed(1),
      requests: stats.requests,
      meanInFlight: (inFlightSum / ticks).toFixed(1),
      reqPerSecond: (stats.requests / seconds).toFixed(1),
      // The bench's own process (pipeline and simulator): near `seconds` x the core share it gets means CPU-bound, not latency-bound.
      cpuSeconds: ((user + system) / 1e6).toFixed(1),
      load: `${loadBefore} -> ${loadAverage()}`,
    };
  };
  const byStage = await measure('by-stage', async (ctx, slice) => {
    for (const stage of STAGE_NAMES) await runStage(ctx, stage, slice);
  });
  console.log(byStage);
  const flowing = await measure('flowing', (ctx, slice) => runSliceStages(ctx, STAGE_NAMES, slice));
  console.log(flowing);
  console.log(
    `flowing / by stage: wall ${(Number(flowing.seconds) / Number(byStage.seconds)).toFixed(2)}x, mean in flight ${(Number(flowing.meanInFlight) / Number(byStage.meanInFlight)).toFixed(2)}x`,
  );
} finally {
  await sim.close();
  await rm(dir, { recursive: true, force: true });
}
