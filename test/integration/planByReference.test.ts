/**
 * A build of 50,000 planned shards continues as new with its plan by reference: the real workflow
 * bundle on Temporal's time-skipping test server, with stub activities (the workflow's payloads are
 * what is under test; planning's own shape is tested in test/unit/planBuild.test.ts). The plan's
 * shape (domain/planShape.ts) and the resolved config ride through continue-as-new; the committed
 * shards are read again from the (stub) manifests; every payload stays a few kilobytes, where the
 * per-shard lists alone would be hundreds.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { temporal } from '@temporalio/proto';
import type * as activities from '../../activities/index.js';
import type { ShardSummary } from '../../activities/buildRef.js';
import { parseBuildConfig, type BuildConfig } from '../../config/buildConfig.js';
import { expandPlan, planShape, type PlanShape } from '../../domain/planShape.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import type { CarriedProgress } from '../../workflows/buildDataset.js';
import { stubSummary } from '../harness/shardSummaries.js';
import { TEST_SERVER_PATH } from '../harness/timeSkipping.js';

const SHARDS = 50_000;
/** Shards not committed when the build starts: the rest were committed by an earlier run of it. */
const LEFT = [0, 1, 2, 3];
/** Kilobytes any one payload may take: a config, a plan shape and the progress fit well within. */
const MAX_PAYLOAD = 16 * 1024;

const summary = (shard: number): ShardSummary => stubSummary(shard, 1, 1, 0);

/** A plan of SHARDS shards of one sample over three sources. */
function bigPlan(config: BuildConfig): PlanShape {
  const shardSources = Array.from({ length: SHARDS }, (_, shard) => (shard < 20_000 ? 0 : shard < 35_000 ? 1 : 2));
  const plan = { configFingerprint: 'fingerprint', sampleCount: SHARDS, shardCount: SHARDS, rounds: [0], shardSizes: shardSources.map(() => 1), shardSources };
  return planShape(plan, `${config.buildId}/_work/plan/summary.json`);
}

test('a build of 50,000 shards continues as new with its plan by reference and the resolved config, every payload small', async () => {
  const [{ TestWorkflowEnvironment }, { Worker }, { prebuiltWorkflowBundle }] = await Promise.all([
    import('@temporalio/testing'),
    import('@temporalio/worker'),
    import('../../worker/bundleProcess.js'),
  ]);
  const committed = new Set(Array.from({ length: SHARDS }, (_, shard) => shard).filter((shard) => !LEFT.includes(shard)));
  const resolved: unknown[] = [];
  const stubs: Partial<typeof activities> = {
    resolveBuildConfig: async (input) => (resolved.push(input), parseBuildConfig(input)),
    extractArchives: async () => [], // the plan is stubbed: no source is read
    planBuild: async (input) => bigPlan(input as BuildConfig),
    committedShards: async ({ from, to }) => {
      const shards = Array.from({ length: to - from }, (_, i) => from + i).filter((shard) => committed.has(shard));
      return { shards, total: { ...summary(-1), planned: shards.length, instruct: shards.length }, reopened: [], kept: [] };
    },
    // The shard child finds its shard committed (as a run of its stages would leave it).
    committedShard: async ({ shard }) => (committed.add(shard), summary(shard)),
    finalizeBuild: async ({ build, shardCount }) =>
      ({ buildId: build.buildId, shards: { planned: shardCount, committed: committed.size, failed: 0 }, failedShards: [] }) as unknown as BuildReport,
  };
  const env = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: TEST_SERVER_PATH } } });
  try {
    const taskQueue = 'plan-by-reference';
    const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: { codePath: await prebuiltWorkflowBundle() }, activities: stubs });
    const input = {
      buildId: 'big',
      output: '/unused',
      sources: [{ type: 'cc3m', uri: '/unused' }],
      maxSamples: SHARDS,
      shardSize: 1,
      shardsPerRun: 2,
      maxParallelShards: 1,
      llm: { preflight: false },
      models: { default: { model: 'm' } },
    };
    const report = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start('buildDataset', { taskQueue, workflowId: 'big', args: [input] });
      const result = (await handle.result()) as BuildReport;
      // Every run of the build, first to last, with the payloads its history holds.
      const runs: temporal.api.history.v1.IHistoryEvent[][] = [];
      for (let runId: string | undefined = handle.firstExecutionRunId; runId;) {
        const events: temporal.api.history.v1.IHistoryEvent[] = (await env.client.workflow.getHandle('big', runId).fetchHistory()).events ?? [];
        runs.push(events);
        runId = events.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
      }
      return { result, runs };
    });

    assert.deepEqual(report.result.shards, { planned: SHARDS, committed: SHARDS, failed: 0 });
    assert.equal(report.runs.length, 2, 'two shards per run: the four left take two runs');
    assert.deepEqual(resolved, [input], 'the config is resolved once, by the first run: the continued one is handed it resolved');
    const continued = report.runs[0]!.at(-1)!.workflowExecutionContinuedAsNewEventAttributes!;
    const [config, carried] = continued.input!.payloads!.map((p) => JSON.parse(Buffer.from(p.data!).toString('utf8')) as unknown);
    assert.deepEqual(config, parseBuildConfig(input), 'the next run gets the resolved config');
    assert.deepEqual((carried as CarriedProgress).plan, bigPlan(parseBuildConfig(input)), 'and the plan by reference');
    assert.equal((carried as CarriedProgress).cursor, 2);

    const sizes = report.runs.flat().flatMap((event) => payloadSizes(event));
    const largest = Math.max(...sizes);
    assert.ok(largest < MAX_PAYLOAD, `a payload of ${largest} bytes`);
    // What the shape replaces: the plan's per-shard lists alone.
    const lists = expandPlan(bigPlan(parseBuildConfig(input)));
    assert.ok(JSON.stringify([lists.shardSizes, lists.shardSources]).length > 10 * MAX_PAYLOAD);
  } finally {
    await env.teardown();
  }
});

/** The sizes of the payloads an event carries (inputs, results, a continue-as-new's arguments). */
function payloadSizes(event: temporal.api.history.v1.IHistoryEvent): number[] {
  const sizes: number[] = [];
  const visit = (value: unknown): void => {
    if (!value || typeof value !== 'object') return;
    if ('payloads' in value && Array.isArray((value as { payloads: unknown }).payloads)) {
      for (const p of (value as { payloads: Array<{ data?: Uint8Array | null }> }).payloads) sizes.push(p.data?.length ?? 0);
      return;
    }
    for (const child of Object.values(value)) visit(child);
  };
  visit(event);
  return sizes;
}
