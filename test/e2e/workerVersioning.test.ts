/**
 * Worker Versioning on the dev server (docs/adr/0008-worker-versioning.md): a build started on
 * version 1 keeps running on version 1's worker after version 2 becomes current, and finishes with
 * the same records as a build that ran undisturbed; a build started afterwards runs on version 2.
 * Which version ran a workflow is read from the server: the workflow's versioning info and the
 * deployment version stamped on every workflow task it completed (the build's and its shards').
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { decodeVersioningBehavior, type WorkerDeploymentVersion } from '@temporalio/common';
import type { BuildConfigInput } from '../../config/buildConfig.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import { LocalStore } from '../../storage/localStore.js';
import { prebuiltWorkflowBundle } from '../../worker/bundleProcess.js';
import { DEFAULT_DEPLOYMENT, workerDeploymentVersion } from '../../worker/deploymentVersion.js';
import { writeCc3m } from '../fixtures/cc3m.js';
import { assertCommittedShardsIntact, eventually } from '../harness/datasetChecks.js';
import { startStack, type Stack } from '../harness/stack.js';

const BUILD_ID = 'versioned';
const SHARDS = 3;
const LATENCY_MS = 150;
/** A reply's latency while version 2 starts: far beyond its start, well within a request's timeout. */
const HOLD_MS = 30_000;

let stack: Stack;
let dir: string;

before(async () => {
  // Latency keeps the first build in flight while version 2 is rolled out.
  stack = await startStack({ simulator: { seed: 4, faults: { latencyMs: LATENCY_MS } }, taskQueue: 'mmif-versioning' });
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-versioning-'));
  await writeCc3m(new LocalStore(path.join(dir, 'cc3m')), 'files', { perShard: 4, shards: SHARDS });
});

after(async () => {
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const config = (output: string): BuildConfigInput => ({
  buildId: BUILD_ID,
  seed: 3,
  output,
  sources: [{ type: 'cc3m', uri: path.join(dir, 'cc3m') }],
  maxSamples: 12,
  shardSize: 4,
  sliceSize: 2,
  models: { default: { model: 'mmif-sim-vlm' } },
});

const service = () => stack.client.workflowService;

async function currentVersion(): Promise<string | undefined> {
  const described = await service()
    .describeWorkerDeployment({ namespace: 'default', deploymentName: DEFAULT_DEPLOYMENT })
    .catch(() => undefined);
  return described?.workerDeploymentInfo?.routingConfig?.currentDeploymentVersion?.buildId ?? undefined;
}

/** The build ids stamped on the workflow tasks completed by `workflowId` and by every child it started, with the time of each. */
async function workflowTaskVersions(workflowId: string): Promise<Array<{ workflowId: string; buildId: string; at: number }>> {
  const tasks: Array<{ workflowId: string; buildId: string; at: number }> = [];
  const children: string[] = [];
  for (const event of (await stack.client.workflow.getHandle(workflowId).fetchHistory()).events ?? []) {
    const completed = event.workflowTaskCompletedEventAttributes;
    if (completed)
      tasks.push({
        workflowId,
        buildId: completed.deploymentVersion?.buildId ?? '(none)',
        at: Number(event.eventTime?.seconds ?? 0) * 1000 + Math.floor((event.eventTime?.nanos ?? 0) / 1e6),
      });
    const child = event.childWorkflowExecutionStartedEventAttributes?.workflowExecution?.workflowId;
    if (child) children.push(child);
  }
  for (const child of children) tasks.push(...(await workflowTaskVersions(child)));
  return tasks;
}

/** Whether the server has seen `version` poll both the workflow and the activity task queue: set current before, it would be refused. */
async function pollsWorkflowsAndActivities(version: WorkerDeploymentVersion): Promise<boolean> {
  const described = await service()
    .describeWorkerDeploymentVersion({ namespace: 'default', deploymentVersion: version })
    .catch(() => undefined);
  const types = new Set((described?.workerDeploymentVersionInfo?.taskQueueInfos ?? []).filter((q) => q.name === stack.taskQueue).map((q) => q.type));
  return types.size === 2;
}

async function pinnedTo(workflowId: string): Promise<{ behavior: string | undefined; buildId: string | undefined }> {
  const info = (await stack.client.workflow.getHandle(workflowId).describe()).raw.workflowExecutionInfo?.versioningInfo;
  return { behavior: decodeVersioningBehavior(info?.behavior), buildId: info?.deploymentVersion?.buildId ?? undefined };
}

/** Data files of the committed shards by path -> sha256 (manifests name their build's time, so they are left out). */
async function records(output: string): Promise<Map<string, string>> {
  const sums = await assertCommittedShardsIntact(new LocalStore(output), BUILD_ID, SHARDS);
  const data = new Map([...sums].filter(([file]) => !file.startsWith('manifests/')));
  assert.ok(data.size >= SHARDS, `data files of ${SHARDS} shards in ${output}`);
  return data;
}

test('a running build stays on the version that started it while a new build runs on the new current version', async () => {
  // Version 1: the stack's worker, its build id the hash of the bundle it loads; the deployment had
  // no current version, so the worker made itself current.
  const v1 = await workerDeploymentVersion({ codePath: await prebuiltWorkflowBundle() });
  await eventually(async () => (await currentVersion()) === v1.buildId, 60_000, 'version 1 made current by its worker');

  const disturbed = path.join(dir, 'disturbed');
  const first = await stack.client.workflow.start('buildDataset', { taskQueue: stack.taskQueue, workflowId: BUILD_ID, args: [config(disturbed)] });
  const answered = stack.simulator.stats().completed;
  await eventually(() => stack.simulator.stats().completed > answered + 4, 120_000, 'the first build under way');
  // Held in flight until version 2 is current: every reply from here takes 30 s, so the build cannot
  // finish while version 2 starts (a 12-sample build otherwise can, on a fast machine).
  stack.simulator.setFaults({ latencyMs: HOLD_MS });

  // Version 2 polls the same task queue, then becomes current, as `temporal worker deployment
  // set-current-version` does.
  const v2: WorkerDeploymentVersion = { deploymentName: DEFAULT_DEPLOYMENT, buildId: 'version-2' };
  await stack.startWorker({ version: v2 });
  await eventually(() => pollsWorkflowsAndActivities(v2), 60_000, 'version 2 polling the workflow and activity task queues');
  await service().setWorkerDeploymentCurrentVersion({ namespace: 'default', deploymentName: DEFAULT_DEPLOYMENT, buildId: v2.buildId, identity: 'workerVersioning.test' });
  const rolledOutAt = Date.now();
  assert.equal(await currentVersion(), v2.buildId);
  assert.equal((await first.describe()).status.name, 'RUNNING', 'the first build is still in flight when version 2 becomes current');
  stack.simulator.setFaults({ latencyMs: LATENCY_MS });

  const firstReport = (await first.result()) as BuildReport;
  assert.deepEqual(firstReport.shards, { planned: SHARDS, committed: SHARDS, failed: 0 });
  assert.deepEqual(await pinnedTo(BUILD_ID), { behavior: 'PINNED', buildId: v1.buildId });
  const firstTasks = await workflowTaskVersions(BUILD_ID);
  assert.deepEqual([...new Set(firstTasks.map((t) => t.buildId))], [v1.buildId], 'every workflow task of the first build and its shards ran on version 1');
  assert.ok(
    firstTasks.some((t) => t.at > rolledOutAt),
    'the first build made progress after version 2 became current',
  );

  // A new build after the roll-out: on version 2 from its first task, undisturbed.
  const undisturbed = path.join(dir, 'undisturbed');
  const secondReport = (await stack.client.workflow.execute('buildDataset', { taskQueue: stack.taskQueue, workflowId: BUILD_ID, args: [config(undisturbed)] })) as BuildReport;
  assert.deepEqual(secondReport.shards, { planned: SHARDS, committed: SHARDS, failed: 0 });
  assert.deepEqual(await pinnedTo(BUILD_ID), { behavior: 'PINNED', buildId: v2.buildId });
  assert.deepEqual([...new Set((await workflowTaskVersions(BUILD_ID)).map((t) => t.buildId))], [v2.buildId], 'every workflow task of the new build ran on version 2');

  assert.deepEqual(await records(disturbed), await records(undisturbed), 'the build that lived through the roll-out wrote the same records as the undisturbed one');
});
