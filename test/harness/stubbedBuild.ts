/**
 * buildDataset's own logic on Temporal's time-skipping test server, with its activities stubbed by
 * the test: what a build plans, how each shard ends (test/harness/stubShardWorkflows.ts), what a
 * commit keeps and what finalizing returns are the test's, so the workflow's rounds, retry window and
 * update validator are exercised in seconds, with no model, store or simulator. The pattern is the
 * SDK's (TestWorkflowEnvironment with activities passed to Worker.create; temporalio/samples-typescript,
 * activities-examples). The server is tools/bin/temporal-test-server (test/harness/timeSkipping.ts).
 */
import { fileURLToPath } from 'node:url';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import type * as activities from '../../activities/index.js';
import { resolveBuildConfig } from '../../activities/resolveConfig.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import type { BuildPlan } from '../../pipeline/planning/planBuild.types.js';
import type { StubShardActivities } from './stubShardWorkflows.js';
import { createTimeSkippingEnv } from './timeSkipping.js';

/**
 * The activities buildDataset calls, as the test stubs them; resolveBuildConfig stays the real (pure)
 * one, and extractArchives has nothing to extract (the plan is stubbed: no source is read).
 */
export type BuildActivities = Pick<typeof activities, 'planBuild' | 'committedShards' | 'committedShard' | 'commitShard' | 'planTopUp' | 'finalizeBuild' | 'preflightEndpoints'> &
  StubShardActivities;

export interface StubbedStack {
  env: TestWorkflowEnvironment;
  taskQueue: string;
  stop(): Promise<void>;
}

const WORKFLOWS = fileURLToPath(new URL('./stubShardWorkflows.ts', import.meta.url));

/** The time-skipping server and one worker running the real buildDataset on `stubs`, until `stop`. */
export async function startStubbedBuilds(taskQueue: string, stubs: BuildActivities): Promise<StubbedStack> {
  const env = await createTimeSkippingEnv();
  let worker: Worker;
  try {
    worker = await Worker.create({
      connection: env.nativeConnection,
      namespace: env.namespace ?? 'default',
      taskQueue,
      workflowsPath: WORKFLOWS,
      activities: { extractArchives: async () => [], ...stubs, resolveBuildConfig },
    });
  } catch (err) {
    await env.teardown();
    throw err;
  }
  const running = worker.run();
  return {
    env,
    taskQueue,
    stop: async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
      await env.teardown();
    },
  };
}

/** A plan of `sizes.length` shards in one round; `sources[i]` is shard i's source (default all 0). */
export function stubPlan(sizes: number[], sources: number[] = sizes.map(() => 0)): BuildPlan {
  return {
    configFingerprint: 'stubbed',
    sampleCount: sizes.reduce((a, b) => a + b, 0),
    shardCount: sizes.length,
    shardSizes: sizes,
    shardSources: sources,
    rounds: [0],
    sources: [],
    sourceProblems: 0,
  };
}

/** What finalizeBuild returns for a build of `shardCount` shards with `failed` listed. */
export function stubReport(buildId: string, shardCount: number, failed: BuildReport['failedShards']): BuildReport {
  return {
    buildId,
    configFingerprint: 'stubbed',
    datasetRoot: `out/${buildId}`,
    simulated: true,
    shards: { planned: shardCount, committed: shardCount - failed.length, failed: failed.length },
    failedShards: failed,
    counts: { planned: 0, instruct: 0, dpo: 0, rejectedSamples: 0, rejectedPairs: 0 },
  } as BuildReport;
}
