/**
 * A slice's samples flow through the stages each on its own (pipeline/run/runStage.ts, runSliceStages):
 * against the HTTP simulator (each reply's latency drawn from the seed, 0.1-1 s), behind a
 * loopback proxy that logs, in order, each request sent and each reply received with its stage. The
 * stage-by-stage path (runStage per stage, what a shard did before) sends no answer request before
 * every constraints reply of the slice is back; the flow sends one while constraint replies are
 * still coming. Both write byte-identical records for the same config and simulator seed.
 * In the e2e tier, though it starts no external server: it waits on simulated latency, which the
 * fast tier's minute cannot spare.
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
import { makeBuildPlan } from '../../pipeline/planning/planBuild.js';
import { runSliceStages, runStage } from '../../pipeline/run/runStage.js';
import { startSimulator, type SimulatorHandle } from '../../simulator/server.js';
import { LocalStore } from '../../storage/localStore.js';
import { getJson } from '../../storage/objectStore.js';
import type { StageState } from '../../pipeline/run/stageState.js';
import type { CallRecord } from '../../llm/callRecord.js';
import { writeCc3m } from '../fixtures/cc3m.js';
import { startLoggingProxy, type LoggingProxy, type ProxyEvent } from '../harness/loggingProxy.js';

const SAMPLES = 8;

let sim: SimulatorHandle;
let proxy: LoggingProxy;
let dir: string;

before(async () => {
  // Replies take 0.1-1 s, drawn per request from the seed: samples drift apart as real ones do (a GPU
  // profile's latency follows each request's work, which is much alike across samples at one stage).
  sim = await startSimulator({ seed: 5, faults: { latencyMs: 100, latencyJitterMs: 900 } });
  proxy = await startLoggingProxy(sim.url);
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-slice-flow-'));
  await writeCc3m(new LocalStore(path.join(dir, 'cc3m')), 'webdataset', { perShard: SAMPLES, shards: 1 });
});

after(async () => {
  await proxy?.close();
  await sim?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** One shard of SAMPLES planned into its own output (its own model cache), run by `run`, committed; its record files and the request log. */
async function build(output: string, run: (ctx: ReturnType<typeof contextFor>, samples: Awaited<ReturnType<typeof shardPlanIn>>) => Promise<void>) {
  const config = parseBuildConfig({
    buildId: 'slice-flow',
    seed: 3,
    output: path.join(dir, output),
    sources: [{ type: 'cc3m', uri: path.join(dir, 'cc3m'), layout: 'webdataset' }],
    maxSamples: SAMPLES,
    shardSize: SAMPLES,
    // Room for every sample's calls at once (a sample sends several together): the endpoint's limit orders nothing here.
    models: { default: { model: 'mmif-sim-vlm', baseUrl: proxy.url, concurrency: 128 } },
    llm: { concurrency: SAMPLES, preflight: false },
  });
  const ctx = contextFor(config);
  await makeBuildPlan(config, ctx.store, ctx.layout, ctx.sources, richnessTools(ctx));
  const samples = await shardPlanIn(ctx.store, ctx.layout, 0);
  assert.equal(samples.length, SAMPLES);
  proxy.take();
  await run(ctx, samples);
  const log = proxy.take();
  const manifest = await writeShard(ctx.store, ctx.layout, {
    buildId: config.buildId,
    shard: 0,
    configFingerprint: 'slice-flow',
    samples,
    training: { template: config.training.promptTemplate, seed: config.seed },
  });
  return { manifest, log };
}

const firstAnswerSent = (log: ProxyEvent[]) => log.findIndex((e) => e.stage === 'answer' && e.event === 'sent');
const lastConstraintsReplied = (log: ProxyEvent[]) => log.reduce((last, e, i) => (e.stage === 'constraints' && e.event === 'replied' ? i : last), -1);

test('samples flow through a slice with no stage barrier, and write the same records as the slice run stage by stage', async () => {
  const byStage = await build('by-stage', async (ctx, samples) => {
    for (const stage of STAGE_NAMES) await runStage(ctx, stage, samples);
  });
  const flowing = await build('flowing', async (ctx, samples) => {
    const outcome = await runSliceStages(ctx, STAGE_NAMES, samples);
    for (const stage of STAGE_NAMES) {
      const o = outcome.stages[stage]!;
      assert.equal(o.ok + o.rejected + o.blocked, SAMPLES, `every sample is counted once in stage ${stage}`);
    }
  });

  assert.ok(lastConstraintsReplied(byStage.log) > 0 && firstAnswerSent(byStage.log) > 0, 'both runs asked for constraints and answers');
  assert.ok(firstAnswerSent(byStage.log) > lastConstraintsReplied(byStage.log), 'stage by stage: no answer before the last constraints reply');
  assert.ok(
    firstAnswerSent(flowing.log) < lastConstraintsReplied(flowing.log),
    `flowing: an answer request (event ${firstAnswerSent(flowing.log)}) went out before the last constraints reply (event ${lastConstraintsReplied(flowing.log)})`,
  );

  // Two samples may ask the same request: which one pays for it, and whether the other finds it cached, follows timing.
  const distinct = (log: ProxyEvent[]) => [...new Set(log.filter((e) => e.event === 'sent').map((e) => e.body))].sort();
  assert.deepEqual(distinct(flowing.log), distinct(byStage.log), 'the same requests');
  assert.ok(byStage.manifest.counts.instruct > 0, 'records were written');
  assert.deepEqual(flowing.manifest.counts, byStage.manifest.counts);
  assert.deepEqual(
    flowing.manifest.files.map((f) => [f.path, f.sha256]),
    byStage.manifest.files.map((f) => [f.path, f.sha256]),
    'byte-identical record files',
  );
});

test('the rejected answer is sent beside the chosen answer, paid and recorded once: by the rejected stage, or by the answer stage that rejected the sample', async (t) => {
  // Answers that often miss their constraints: some samples are rejected in the answer stage, after their rejected answer went out.
  const before = sim.setFaults({}).complianceRate;
  sim.setFaults({ complianceRate: 0.3 });
  t.after(() => sim.setFaults({ complianceRate: before }));
  let ctxOf: ReturnType<typeof contextFor> | undefined;
  let ran: Awaited<ReturnType<typeof shardPlanIn>> = [];
  const { log } = await build('sent-ahead', async (ctx, samples) => {
    ctxOf = ctx;
    ran = samples;
    await runSliceStages(ctx, STAGE_NAMES, samples);
  });
  const ctx = ctxOf!;
  const states = await Promise.all(
    ran.map(async (sample) =>
      Object.fromEntries(
        await Promise.all(STAGE_NAMES.map(async (stage) => [stage, await getJson<StageState>(ctx.store, ctx.layout.stageState(sample.sampleId, stage))] as const)),
      ),
    ),
  );
  const paid = (calls: readonly CallRecord[]) => calls.filter((c) => !c.cached).length;
  // Every request that reached the endpoint is paid in exactly one stage state.
  const sent = log.filter((e) => e.event === 'sent' && e.stage !== 'other').length;
  assert.equal(
    states.reduce((n, s) => n + STAGE_NAMES.reduce((m, stage) => m + paid(s[stage]?.calls ?? []), 0), 0),
    sent,
    'paid records = requests sent',
  );
  let ahead = 0;
  let inVain = 0;
  for (const s of states) {
    const answer = s.answer;
    if (!answer) continue;
    const rejectedRole = answer.calls.filter((c) => c.stage === 'rejected');
    if (s.rejected) {
      // The rejected stage's first call was answered by the reply sent ahead, and counted paid there.
      assert.equal(s.rejected.calls[0]?.stage, 'rejected');
      assert.equal(s.rejected.calls[0]?.recovered, true, 'the rejected stage counts the reply sent ahead as its own paid call');
      assert.equal(rejectedRole.length, 0, 'an accepted answer stage records none of the rejected stage calls');
      ahead += 1;
    } else {
      assert.equal(answer.status, 'rejected');
      assert.ok(rejectedRole.length > 0, 'a sample the answer stage rejected records the rejected answer sent ahead for it');
      inVain += 1;
    }
  }
  assert.ok(ahead > 0 && inVain > 0, `samples reached the rejected stage (${ahead}) and were rejected in the answer stage (${inVain})`);
});
