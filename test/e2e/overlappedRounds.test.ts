/**
 * Overlapped top-up rounds, end to end on a real Temporal dev server and the simulator (imperfect
 * compliance, so the first round falls short): the next round is planned from a forecast and its
 * shards start while the first round's last shard still runs (read from the build's history), the
 * records kept are byte for byte those of the same build with its rounds one after another, and a
 * build terminated mid-overlap and started again commits the same bytes as one never interrupted.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BuildConfigInput } from '../../config/buildConfig.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import type { BuildPlan } from '../../pipeline/planning/planBuild.types.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { getJson } from '../../storage/objectStore.js';
import { LocalStore } from '../../storage/localStore.js';
import type { BuildProgress } from '../../workflows/buildProgress.js';
import { writeCc3m } from '../fixtures/cc3m.js';
import { assertCommittedShardsIntact, eventually } from '../harness/datasetChecks.js';
import { startStack, type Stack } from '../harness/stack.js';

let stack: Stack;
let dir: string;

before(async () => {
  // Latency per request: a shard's sequential calls take longer than a commit and a planning round.
  stack = await startStack({ simulator: { seed: 3, faults: { complianceRate: 0.7, latencyMs: 150 } }, taskQueue: 'mmif-overlap' });
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-overlap-'));
  await writeCc3m(new LocalStore(path.join(dir, 'cc3m')), 'files', { perShard: 20, shards: 2 });
});

after(async () => {
  await stack?.stop();
  if (dir && !process.env.KEEP) await rm(dir, { recursive: true, force: true });
});

const BUILD = 'overlap';
// Fewer pairs than SFT records pass (uninformative pairs are dropped): the first round falls short of 8.
const TARGETS = { instruct: 8, dpo: 8 };

const config = (output: string, overlapRounds: boolean): BuildConfigInput => ({
  buildId: BUILD,
  seed: 7,
  output,
  sources: [{ type: 'cc3m', uri: path.join(dir, 'cc3m'), layout: 'files' }],
  maxSamples: 40,
  // Round 0: 8 samples in 8 shards, two at a time; the forecast comes once shards 0-3 are committed,
  // and its round's shards queue behind shards 4-7.
  targets: { ...TARGETS, expectedYield: 1, overlapRounds },
  shardSize: 1,
  sliceSize: 1,
  maxParallelShards: 2,
  models: { default: { model: 'mmif-sim-vlm' }, rejected: { model: 'mmif-sim-vlm-mini' } },
});

const run = (input: BuildConfigInput): Promise<BuildReport> => stack.client.workflow.execute('buildDataset', { taskQueue: stack.taskQueue, workflowId: BUILD, args: [input] });

/** Every kept record, SFT then DPO, in plan order (= rank order: one source): the dataset's bytes whatever the shard cuts. */
async function keptRecords(store: LocalStore, shards: number): Promise<{ instruct: string; dpo: string }> {
  const layout = buildLayout(BUILD);
  let instruct = '';
  let dpo = '';
  for (let shard = 0; shard < shards; shard++) {
    instruct += (await store.get(layout.instructJsonl(shard)))?.toString() ?? '';
    dpo += (await store.get(layout.dpoJsonl(shard)))?.toString() ?? '';
  }
  return { instruct, dpo };
}

const overlapped = () => new LocalStore(path.join(dir, 'overlapped'));

test('the next round starts while the last shard of the first still runs, and the records kept are those of rounds one after another', async () => {
  const report = await run(config(overlapped().root, true));
  assert.equal(report.targets?.outcome, 'targets-met');
  assert.deepEqual([report.counts.instruct, report.counts.dpo], [TARGETS.instruct, TARGETS.dpo]);
  const plan = (await getJson<BuildPlan>(overlapped(), buildLayout(BUILD).planSummary))!;
  assert.ok(plan.rounds.length >= 2, `the first round fell short: rounds ${plan.rounds.join(',')}`);

  // From the build's history: the first start of a round-1 shard comes before the last shard of round 0 completes.
  const { events } = await stack.client.workflow.getHandle(BUILD).fetchHistory();
  const shardOf = (id: string | null | undefined) => Number(/\/shard-(\d+)$/.exec(id ?? '')?.[1]);
  const roundOf = (shard: number) => plan.rounds.filter((start) => start <= shard).length - 1;
  const started = (events ?? []).findIndex((e) => roundOf(shardOf(e.childWorkflowExecutionStartedEventAttributes?.workflowExecution?.workflowId)) === 1);
  const completed = (events ?? []).map((e, i) => (roundOf(shardOf(e.childWorkflowExecutionCompletedEventAttributes?.workflowExecution?.workflowId)) === 0 ? i : -1));
  const lastOfRound0 = Math.max(...completed);
  assert.ok(started >= 0 && lastOfRound0 >= 0);
  assert.ok(started < lastOfRound0, `a round-1 shard started (event ${started}) before round 0's last shard completed (event ${lastOfRound0})`);

  // The same build with its rounds one after another keeps the same records, byte for byte.
  const sequentialStore = new LocalStore(path.join(dir, 'sequential'));
  const sequential = await run(config(sequentialStore.root, false));
  assert.deepEqual(sequential.counts.instruct, report.counts.instruct);
  assert.deepEqual(await keptRecords(sequentialStore, sequential.shards.planned), await keptRecords(overlapped(), report.shards.planned));
  await assertCommittedShardsIntact(overlapped(), BUILD, report.shards.planned);
});

test('a build terminated mid-overlap and started again commits the same bytes as one never interrupted', async () => {
  const store = new LocalStore(path.join(dir, 'resumed'));
  const handle = await stack.client.workflow.start('buildDataset', { taskQueue: stack.taskQueue, workflowId: BUILD, args: [config(store.root, true)] });
  // Terminated once the forecast has planned round 1 while round 0 still runs.
  await eventually(
    async () => {
      const progress = await handle.query<BuildProgress>('progress');
      return progress.shards.planned > 8 && progress.shards.committed < progress.shards.planned;
    },
    120_000,
    'round 1 planned from a forecast',
  );
  await handle.terminate('killed mid-overlap');
  const report = await run(config(store.root, true));
  const uninterrupted = (await getJson<BuildReport>(overlapped(), buildLayout(BUILD).report))!;
  assert.equal(report.shards.planned, uninterrupted.shards.planned);
  assert.deepEqual(report.counts, uninterrupted.counts);
  const resumed = await assertCommittedShardsIntact(store, BUILD, report.shards.planned);
  const reference = await assertCommittedShardsIntact(overlapped(), BUILD, uninterrupted.shards.planned);
  assert.deepEqual([...resumed.entries()].sort(), [...reference.entries()].sort());
});
