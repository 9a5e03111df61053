/**
 * The worker's sample lanes keep the endpoint's slots busy through a slice's tail
 * (pipeline/run/lanePool.ts): two slices of one shard run at once against the HTTP simulator serving as
 * a GPU (latency from each reply's output length), behind a loopback proxy that logs each request
 * sent and each reply received. A short slice (3 samples) beside a long one (15): with lanes per
 * slice (llm.concurrency 3 each, what a slice did before), the short slice's lanes idle from its end
 * while the long one's samples still wait for its own 3; with the lanes shared (6 in one pool), a
 * lane whose sample ended takes the next waiting sample of either slice. Measured from the proxy's
 * log: the mean requests in flight from the first request to the last sample's first request (while
 * samples wait). Both runs write byte-identical records. In the e2e tier: ~30 s of simulated GPU
 * latency.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { contextFor, richnessTools } from '../../activities/runtime.js';
import { shardPlanIn } from '../../activities/shardPlan.js';
import { parseBuildConfig } from '../../config/buildConfig.js';
import { STAGE_NAMES } from '../../config/stages.js';
import { writeShard } from '../../output/commit/shardWriter.js';
import { LanePool } from '../../pipeline/run/lanePool.js';
import { makeBuildPlan } from '../../pipeline/planning/planBuild.js';
import { runSliceStages } from '../../pipeline/run/runStage.js';
import { GPU_PROFILES, GpuFleet } from '../../simulator/gpuProfile.js';
import { startSimulator, type SimulatorHandle } from '../../simulator/server.js';
import { LocalStore } from '../../storage/localStore.js';
import { noTallies } from '../../domain/tallies.js';
import { writeCc3m } from '../fixtures/cc3m.js';
import { startLoggingProxy, type LoggingProxy, type ProxyEvent } from '../harness/loggingProxy.js';

const SHORT = 3;
const LONG = 15;
const SAMPLES = SHORT + LONG;
/** Lanes in all: 3 per slice, or 6 shared. */
const LANES = 6;

let sim: SimulatorHandle;
let proxy: LoggingProxy;
let dir: string;

before(async () => {
  // One GPU of the published profile at 100x speed: a mean reply takes ~0.3 s, a sample ~12 of them.
  sim = await startSimulator({ seed: 5, gpus: new GpuFleet(GPU_PROFILES['qwen2.5-vl-7b'], 1, 100) });
  proxy = await startLoggingProxy(sim.url);
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-sample-lanes-'));
  await writeCc3m(new LocalStore(path.join(dir, 'cc3m')), 'webdataset', { perShard: SAMPLES, shards: 1 });
});

after(async () => {
  await proxy?.close();
  await sim?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** One shard planned into its own output, its two slices run at once by `run`, committed; its record files and the proxy's log. */
async function build(output: string, lanes: LanePool | undefined) {
  const config = parseBuildConfig({
    buildId: 'sample-lanes',
    seed: 3,
    output: path.join(dir, output),
    sources: [{ type: 'cc3m', uri: path.join(dir, 'cc3m'), layout: 'webdataset' }],
    maxSamples: SAMPLES,
    shardSize: SAMPLES,
    // Room for every lane's calls at once (a sample sends several together, ADR 0074): the lanes, not the endpoint's limit, bound what is in flight.
    models: { default: { model: 'mmif-sim-vlm', baseUrl: proxy.url, concurrency: 4 * LANES } },
    llm: { concurrency: LANES / 2, preflight: false },
  });
  const ctx = contextFor(config);
  await makeBuildPlan(config, ctx.store, ctx.layout, ctx.sources, richnessTools(ctx));
  const samples = await shardPlanIn(ctx.store, ctx.layout, 0);
  assert.equal(samples.length, SAMPLES);
  proxy.take();
  const slices = [samples.slice(0, SHORT), samples.slice(SHORT)];
  // The short slice was scheduled first (its place in line comes first), as the shard's first slice is.
  await Promise.all(slices.map((slice, i) => runSliceStages(ctx, STAGE_NAMES, slice, noTallies(), () => {}, lanes ? { pool: lanes, order: [i, 0, i] } : undefined)));
  const log = proxy.take();
  const manifest = await writeShard(ctx.store, ctx.layout, {
    buildId: config.buildId,
    shard: 0,
    configFingerprint: 'sample-lanes',
    samples,
    training: { template: config.training.promptTemplate, seed: config.seed },
  });
  return { manifest, busy: busyWhileWaiting(log) };
}

/**
 * Mean requests in flight, weighted by time, from the first request to the last sample's first
 * request (its instruction request): the span in which a sample was still waiting for a lane.
 */
const FIRST_CALLS = ['instructions', 'refined_instruction'];
function busyWhileWaiting(log: ProxyEvent[]): { mean: number; seconds: number } {
  const end = log.reduce((last, e) => (FIRST_CALLS.includes(e.stage) && e.event === 'sent' ? e.at : last), Number.NaN);
  assert.ok(!Number.isNaN(end), 'instruction requests were sent');
  const start = log[0]!.at;
  let inFlight = 0;
  let area = 0;
  let at = start;
  for (const e of log) {
    if (e.at > end) break;
    area += inFlight * (e.at - at);
    at = e.at;
    inFlight += e.event === 'sent' ? 1 : -1;
  }
  return { mean: area / (end - start), seconds: (end - start) / 1000 };
}

test("shared lanes keep the endpoint's slots busy through a slice's tail, where lanes per slice idle, and write the same records", async (t) => {
  const perSlice = await build('per-slice', undefined);
  const shared = await build('shared', new LanePool(LANES));
  const line = `${LANES} lanes: ${shared.busy.mean.toFixed(2)} requests in flight over ${shared.busy.seconds.toFixed(1)} s shared, ${perSlice.busy.mean.toFixed(2)} over ${perSlice.busy.seconds.toFixed(1)} s per slice`;
  t.diagnostic(line);
  // Shared: every lane holds a sample while any waits; a lane is empty only between its sample's calls.
  assert.ok(shared.busy.mean >= 0.8 * LANES, line);
  // Per slice: the short slice's 3 lanes idle once its samples end, while the long slice's wait for its own 3.
  assert.ok(perSlice.busy.mean <= shared.busy.mean - 1, line);

  assert.ok(perSlice.manifest.counts.instruct > 0, 'records were written');
  assert.deepEqual(shared.manifest.counts, perSlice.manifest.counts);
  assert.deepEqual(
    shared.manifest.files.map((f) => [f.path, f.sha256]),
    perSlice.manifest.files.map((f) => [f.path, f.sha256]),
    'byte-identical record files',
  );
});
