/**
 * Resume cost, measured on a real Temporal dev server with an in-process worker:
 *  1. how long a re-run takes to skip 1,000 committed shards (the build's plan, config and 1,000
 *     shard manifests are written directly, as a finished build leaves them);
 *  2. how many workflow history events one sample costs, from a real 64-sample build on the simulator.
 *
 * Run: npx tsx bench/resume.ts [--shards 1000] [--parallel 4,32]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { parseBuildConfig, type BuildConfigInput } from '../config/buildConfig.js';
import { buildLayout } from '../storage/buildLayout.js';
import { MANIFEST_FORMAT, type ShardManifest } from '../output/contracts/manifest.js';
import { mergeQuality } from '../output/reports/qualityReport.js';
import { configFingerprint, storedConfigOf } from '../pipeline/planning/planBuild.js';
import type { BuildPlan } from '../pipeline/planning/planBuild.types.js';
import { putJson } from '../storage/objectStore.js';
import { LocalStore } from '../storage/localStore.js';
import { startStack } from '../test/harness/stack.js';
import { writeCc3m } from '../test/fixtures/cc3m.js';

const { values } = parseArgs({ options: { shards: { type: 'string', default: '1000' }, parallel: { type: 'string', default: '4,32' } } });
const SHARDS = Number(values.shards);
Runtime.install({ logger: new DefaultLogger('WARN') });
const dir = await mkdtemp(path.join(tmpdir(), 'mmif-bench-resume-'));
const stack = await startStack({ taskQueue: 'bench-resume' });

const base = (buildId: string, extra: Partial<BuildConfigInput> = {}): BuildConfigInput => ({
  buildId,
  output: path.join(dir, 'out'),
  sources: [{ type: 'cc3m', uri: path.join(dir, 'cc3m') }],
  maxSamples: SHARDS,
  shardSize: 1,
  image: { minShortSide: 100 },
  models: { default: { model: 'mmif-sim-vlm' } },
  ...extra,
});

/** Leaves in the store what a finished build of SHARDS one-sample shards leaves. */
async function committedBuild(input: BuildConfigInput): Promise<void> {
  const config = parseBuildConfig(input);
  const store = new LocalStore(config.output);
  const layout = buildLayout(config.buildId);
  const fingerprint = configFingerprint(config);
  await putJson(store, layout.config, storedConfigOf(config));
  const plan: BuildPlan = {
    configFingerprint: fingerprint,
    sampleCount: SHARDS,
    shardCount: SHARDS,
    shardSizes: Array(SHARDS).fill(1),
    shardSources: Array(SHARDS).fill(0),
    rounds: [0],
    sources: [{ type: 'cc3m', name: 'cc3m', target: SHARDS, read: SHARDS, samples: SHARDS, filtered: {}, problems: {}, selected: SHARDS, ranked: SHARDS, exhausted: false }],
    sourceProblems: 0,
  };
  await putJson(store, layout.planSummary, plan);
  for (let shard = 0; shard < SHARDS; shard++) {
    const manifest: ShardManifest = {
      format: MANIFEST_FORMAT,
      buildId: config.buildId,
      shard,
      configFingerprint: fingerprint,
      simulated: true,
      counts: { planned: 1, instruct: 1, dpo: 1, rejectedSamples: 0, rejectedPairs: 0 },
      rejectsByStage: {},
      rejectsByReason: {},
      rejectedSamplesByReason: {},
      files: [],
      models: {},
      usage: {},
      verification: { byMethod: {}, regeneratedAnswers: 0 },
      pairs: { byStrategy: {}, byConstraintType: {} },
      quality: mergeQuality([]),
      modelCallRejects: 0,
      revision: 1,
    };
    await putJson(store, layout.manifest(shard), manifest);
  }
}

async function historyEvents(workflowId: string): Promise<number> {
  let total = 0;
  for await (const w of stack.client.workflow.list({ query: `WorkflowId = '${workflowId}' OR WorkflowId STARTS_WITH '${workflowId}/'` })) {
    total += (await stack.client.workflow.getHandle(w.workflowId, w.runId).fetchHistory()).events?.length ?? 0;
  }
  return total;
}

try {
  console.log(`resume: skipping ${SHARDS} committed shards`);
  for (const parallel of values.parallel!.split(',').map(Number)) {
    const input = base(`resume-${parallel}`, { maxParallelShards: parallel });
    await committedBuild(input);
    const started = performance.now();
    await stack.client.workflow.execute('buildDataset', { taskQueue: stack.taskQueue, workflowId: `resume-${parallel}`, args: [input] });
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `  maxParallelShards ${String(parallel).padStart(3)}: ${seconds.toFixed(1)} s (${((seconds / SHARDS) * 1000).toFixed(1)} ms per shard), ${stack.simulator.stats().requests} model calls`,
    );
  }

  await writeCc3m(new LocalStore(path.join(dir, 'cc3m')), 'files', { perShard: 16, shards: 4 });
  const samples = 64;
  const input = base('events', { maxSamples: samples, shardSize: 16, sliceSize: 16, maxParallelShards: 4 });
  await stack.client.workflow.execute('buildDataset', { taskQueue: stack.taskQueue, workflowId: 'events', args: [input] });
  const events = await historyEvents('events');
  console.log(`history: ${events} events for ${samples} samples = ${(events / samples).toFixed(1)} events per sample (shards of 16, slices of 16)`);
} finally {
  await stack.stop();
  await rm(dir, { recursive: true, force: true });
}
