/**
 * Records the histories the replay test (test/unit/workflowReplay.test.ts) replays: real runs on a dev
 * server, the simulator and a local output, a small set reaching every workflow (a build continuing as
 * new, a targets build with a top-up round planned from a forecast, a Batch API build, a cancelled build, a dated
 * run, an evaluation, a lease desk to its idle end). They guard today's code against accidental
 * nondeterminism and are re-recorded whenever workflow code changes on purpose
 * (docs/adr/0017-compatibility-reset.md). Each execution is saved as `histories/<workflowId>@<runId>.json`,
 * protobuf.js objects read back with History.fromObject (the SDK's historyFromJSON fails here: a
 * second protobufjs major version). Run: `npm run record-histories [-- --only targets]` (~5 min).
 */
import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import proto from '@temporalio/proto';
import type { BuildConfigInput } from '../../config/buildConfig.js';
import { evalWorkflowId, type EvalConfigInput } from '../../config/evalConfig.js';
import { LocalStore } from '../../storage/localStore.js';
import { LEASE_MS } from '../../llm/concurrencyLeases.js';
import { reportDemand } from '../../worker/endpointSharing.js';
import type { BuildProgress } from '../../workflows/buildProgress.js';
import { endpointLeases, endpointLeasesWorkflowId, MAX_HELD } from '../../workflows/endpointLeases.js';
import { writeCc3m } from '../fixtures/cc3m.js';
import { eventually } from '../harness/datasetChecks.js';
import { startStack } from '../harness/stack.js';
import { DEFAULT_TUNING } from '../../simulator/replies.js';

// CommonJS: its namespaces come through the default export.
const { History } = proto.temporal.api.history.v1;

const HISTORIES = fileURLToPath(new URL('./histories/', import.meta.url));
/** How History.toObject writes what JSON cannot hold as is. */
export const HISTORY_JSON = { longs: String, enums: String, bytes: String } as const;
const FAST_RETRY = { maximumAttempts: 2, initialIntervalSeconds: 0.5, maximumIntervalSeconds: 1, heartbeatTimeoutSeconds: 10 };

const KINDS = ['build', 'targets', 'batch', 'cancelled', 'scheduled', 'eval', 'leases'] as const;
type Kind = (typeof KINDS)[number];
/** `--only a,b`: the kinds to record again, keeping the other histories; without it every kind, replacing all. */
const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1]!.split(',') : undefined;
for (const kind of only ?? []) if (!(KINDS as readonly string[]).includes(kind)) throw new Error(`--only takes ${KINDS.join(', ')}, got ${kind}`);
const recording = (kind: Kind) => only === undefined || only.includes(kind);
/** The lease desk's own queue: the builds' model calls lease on the stack's queue, and must not mix in. */
const LEASE_QUEUE = 'mmif-replay-leases';

/** The kind of history a workflow id (or a history file named after it) recorded here is. */
function kindOf(workflowId: string): Kind | undefined {
  if (workflowId.startsWith(evalWorkflowId('replay-'))) return 'eval';
  if (workflowId.startsWith(endpointLeasesWorkflowId(LEASE_QUEUE))) return 'leases';
  return KINDS.find((kind) => workflowId.startsWith(`replay-${kind}`));
}

const stack = await startStack({ simulator: { seed: 12, faults: { batchCompletionMs: 1500 } }, taskQueue: 'mmif-replay' });
const dir = await mkdtemp(path.join(tmpdir(), 'mmif-replay-'));
try {
  await writeCc3m(new LocalStore(path.join(dir, 'cc3m')), 'files', { perShard: 3, shards: 2 });
  const config = (buildId: string, overrides: Partial<BuildConfigInput> = {}): BuildConfigInput => ({
    buildId,
    seed: 3,
    output: path.join(dir, 'out', buildId),
    sources: [{ type: 'cc3m', uri: path.join(dir, 'cc3m') }],
    maxSamples: 6,
    shardSize: 2,
    retry: FAST_RETRY,
    llm: { retry: { maxAttempts: 1, baseDelayMs: 50, maxDelayMs: 100 } },
    models: { default: { model: 'mmif-sim-vlm' } },
    ...overrides,
  });
  const run = (id: string, input: BuildConfigInput) => stack.client.workflow.execute('buildDataset', { taskQueue: stack.taskQueue, workflowId: id, args: [input] });

  /**
   * The lease desk of LEASE_QUEUE, fed scripted reports (as workers send them) for one endpoint with
   * a cap of 8: worker a alone gets all of it; b joins and its unchanged answer is held back until a's
   * requests end down to its half; a's unchanged answer ends by the HOLD_MS timer; a newer report of
   * b supersedes its waiting one; a fleet of more workers than
   * the desk holds reports for gets its fair shares (some answered at once, with `again`); then all
   * release and the desk ends after its idle wait. Every grant is a lease, with its `termMs`.
   * First, on a desk started with x, y and z holding 2 each of a cap
   * of 6 on another endpoint: their three unchanged reports are held, a fourth worker owed capacity
   * takes the place of one (answered at once with `again`), and the slots that one gives back reach
   * the owed worker's held report.
   */
  const recordLeases = async (): Promise<void> => {
    await stack.startWorker({ taskQueue: LEASE_QUEUE });
    const seqs: Record<string, number> = {};
    const reportOn = (endpoint: string, cap: number) => (worker: string, inFlight: number, queued: number, holding: number) =>
      reportDemand(stack.client, LEASE_QUEUE, {
        worker,
        seq: (seqs[worker] = (seqs[worker] ?? 0) + 1),
        endpoints: [{ endpoint, cap, inFlight, queued, holding, drainMs: 1_000 }],
      });
    const report = reportOn('replay-endpoint', 8);
    const grant = async (answer: Promise<{ grants: Record<string, number>; superseded?: boolean }>) => (await answer).grants['replay-endpoint'];
    const desk = stack.client.workflow.getHandle(endpointLeasesWorkflowId(LEASE_QUEUE));

    const term = Date.now() + 10 * 60_000;
    const holder = { cap: 6, demand: 2, holds: 2, grant: 2, until: term };
    await stack.client.workflow.start(endpointLeases, {
      workflowId: endpointLeasesWorkflowId(LEASE_QUEUE),
      taskQueue: LEASE_QUEUE,
      args: [{ book: { 'replay-owed': { x: { ...holder }, y: { ...holder }, z: { ...holder } } }, newest: {} }],
    });
    const owedReport = reportOn('replay-owed', 6);
    const satisfied = ['x', 'y', 'z'].map((worker) => owedReport(worker, 2, 0, 2).then((answer) => ({ worker, answer })));
    const held = async () => {
      const { events } = await desk.fetchHistory();
      const count = (pick: (e: NonNullable<typeof events>[number]) => unknown) => (events ?? []).filter(pick).length;
      return count((e) => e.workflowExecutionUpdateAcceptedEventAttributes) - count((e) => e.workflowExecutionUpdateCompletedEventAttributes);
    };
    await eventually(async () => (await held()) === MAX_HELD, 30_000, 'the three unchanged reports to be held');
    const owed = owedReport('n', 0, 6, 0);
    const evicted = await Promise.race(satisfied);
    assert.ok(evicted.answer.again !== undefined, 'the one making room is told to report again later');
    void owedReport(evicted.worker, 0, 0, 0);
    assert.equal((await owed).grants['replay-owed'], 2, 'the slots given back reach the held owed report');
    for (const worker of ['x', 'y', 'z', 'n']) await reportDemand(stack.client, LEASE_QUEUE, { worker, seq: ++seqs[worker]!, endpoints: [], release: true });
    await Promise.all(satisfied);

    const first = await report('a', 0, 10, 0);
    assert.equal(first.grants['replay-endpoint'], 8, 'a alone leases the whole cap');
    assert.equal(first.termMs, LEASE_MS, 'for a term');
    const bJoins = grant(report('b', 0, 10, 0));
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(await grant(report('a', 8, 2, 8)), 4, "a's fair half");
    const aSteady = grant(report('a', 4, 6, 4));
    assert.equal(await bJoins, 4, "b's held answer moves once a's requests end down to its half");
    assert.equal(await aSteady, 4, "a's unchanged answer comes after HOLD_MS");
    const bOlder = report('b', 4, 6, 4);
    await new Promise((r) => setTimeout(r, 500));
    const bNewer = grant(report('b', 4, 6, 4));
    assert.equal((await bOlder).superseded, true);

    assert.equal(await bNewer, 4, "b's newer report is answered");
    // A fleet of more workers than the desk holds reports (MAX_HELD), all busy on another endpoint:
    // rounds of reports at once until each holds its fair share; in the last round the desk holds
    // MAX_HELD unchanged reports and answers the rest at once with `again`.
    const fleet = Array.from({ length: MAX_HELD + 3 }, (_, i) => `fleet-${i}`);
    const fleetGrants: Record<string, number> = {};
    for (let round = 0, unheld = 0; unheld === 0 || fleet.some((w) => fleetGrants[w] !== 1); round++) {
      assert.ok(round < 20, `the fleet reaches fair shares of 1 each: ${JSON.stringify(fleetGrants)}`);
      const answers = await Promise.all(
        fleet.map((worker) => {
          const holding = fleetGrants[worker] ?? 0;
          return reportDemand(stack.client, LEASE_QUEUE, {
            worker,
            seq: (seqs[worker] = (seqs[worker] ?? 0) + 1),
            endpoints: [{ endpoint: 'replay-fleet', cap: fleet.length, inFlight: holding, queued: 10, holding, drainMs: 1_000 }],
          });
        }),
      );
      answers.forEach((answer, i) => (fleetGrants[fleet[i]!] = answer.grants['replay-fleet']!));
      unheld = answers.filter((answer) => answer.again !== undefined).length;
    }
    for (const worker of ['a', 'b', ...fleet]) await reportDemand(stack.client, LEASE_QUEUE, { worker, seq: ++seqs[worker]!, endpoints: [], release: true });
    await eventually(async () => (await desk.describe()).status.name === 'COMPLETED', 300_000, 'the lease desk to end when idle');
  };

  // An evaluation of a one-sample split (a rule and a judged constraint).
  const data = path.join(dir, 'eval-data');
  await mkdir(path.join(data, 'MM-IFEval'), { recursive: true });
  await copyFile(fileURLToPath(new URL('../../samples/cc3m/00000/000000000.jpg', import.meta.url)), path.join(data, 'scene.jpg'));
  const line = {
    id: 's1',
    index: 0,
    image: 'scene.jpg',
    tag: 'C-Level',
    infer_type: 'main',
    instruction: 'Describe the scene.',
    constraints: [
      {
        key: 'sentence_number_limit',
        value: 'Use exactly 3 sentences.',
        judge: { method: 'rule_based', verify_funcs: [{ func: 'check_whether_response_sentence_number_in_range', params: [3, 3] }] },
      },
      { key: 'tone_requirement', value: 'Write in a cheerful tone.', judge: { method: 'direct_gpt' } },
    ],
  };
  await writeFile(path.join(data, 'MM-IFEval', 'mmif_holdout.jsonl'), `${JSON.stringify(line)}\n`);
  const evaluation = (evalId: string, extra: Partial<EvalConfigInput> = {}): EvalConfigInput => ({
    evalId,
    data,
    model: { model: 'sim-model' },
    responses: 2,
    sliceSize: 1,
    retry: FAST_RETRY,
    ...extra,
  });
  const runEval = (input: EvalConfigInput) =>
    stack.client.workflow.execute('evaluateModel', { taskQueue: stack.taskQueue, workflowId: evalWorkflowId(input.evalId), args: [input] });
  if (recording('eval')) await runEval(evaluation('replay-eval', { judge: { model: 'mmif-sim-vlm' } }));

  // A plain build of three shards, one per run: it continues as new twice.
  if (recording('build')) await run('replay-build', config('replay-build', { shardsPerRun: 1, maxParallelShards: 1 }));
  // A targets build: most answers break a constraint, so the first round falls short; one shard at a
  // time, the next is planned from a forecast once every shard of the round but the last is committed.
  if (recording('targets')) {
    stack.simulator.setFaults({ complianceRate: 0.2 });
    await run('replay-targets', config('replay-targets', { maxSamples: 6, shardSize: 1, maxParallelShards: 1, targets: { instruct: 3, expectedYield: 1, maxRounds: 4 } }));
    stack.simulator.setFaults({ complianceRate: DEFAULT_TUNING.complianceRate });
  }
  // The Batch API: its shard goes stage by stage, one activity waiting for each batch.
  if (recording('batch')) {
    await run(
      'replay-batch',
      config('replay-batch', { maxSamples: 2, batchApi: { pollSeconds: 1, maxResubmits: 1 }, models: { default: { model: 'mmif-sim-vlm', batch: true } } }),
    );
  }
  // A build cancelled while its shards run: the parent and its children end cancelled.
  if (recording('cancelled')) {
    stack.simulator.setFaults({ latencyMs: 150 });
    const cancelled = await stack.client.workflow.start('buildDataset', {
      taskQueue: stack.taskQueue,
      workflowId: 'replay-cancelled',
      args: [config('replay-cancelled', { maxParallelShards: 1 })],
    });
    await eventually(async () => (await cancelled.query<BuildProgress>('progress')).shards.committed >= 1, 120_000, 'a committed shard');
    await cancelled.cancel();
    await assert.rejects(cancelled.result());
    stack.simulator.setFaults({ latencyMs: 0 });
    await eventually(
      async () => {
        for await (const e of stack.client.workflow.list({ query: `WorkflowId STARTS_WITH 'replay-cancelled' AND ExecutionStatus = 'Running'` })) if (e) return false;
        return true;
      },
      120_000,
      'the cancelled build and its shards to close',
    );
  }
  // A schedule's run: scheduledBuild starts the dated build as its child.
  if (recording('scheduled')) {
    await stack.client.schedule.create({
      scheduleId: 'replay-nightly',
      spec: { cronExpressions: ['0 3 * * *'] },
      action: {
        type: 'startWorkflow',
        workflowType: 'scheduledBuild',
        taskQueue: stack.taskQueue,
        workflowId: 'replay-scheduled',
        args: [config('replay-scheduled', { maxSamples: 2 })],
      },
    });
    await stack.client.schedule.getHandle('replay-nightly').trigger();
    await eventually(
      async () => {
        for await (const e of stack.client.workflow.list({ query: `WorkflowType = 'scheduledBuild' AND ExecutionStatus = 'Completed'` })) if (e) return true;
        return false;
      },
      120_000,
      'the scheduled build',
    );
    await stack.client.schedule.getHandle('replay-nightly').delete();
  }
  // Last, once no build calls a model: this process's limiters are shared by its workers, and a
  // worker on LEASE_QUEUE would report the builds' demand to the desk too.
  if (recording('leases')) await recordLeases();
  await mkdir(HISTORIES, { recursive: true });
  // The histories of the kinds recorded again go (all of them without --only): no stale one stays.
  for (const file of await readdir(HISTORIES)) {
    const kind = kindOf(file);
    if (only === undefined || (kind && only.includes(kind))) await rm(path.join(HISTORIES, file));
  }
  let saved = 0;
  for await (const execution of stack.client.workflow.list()) {
    if (execution.status.name === 'RUNNING') continue;
    const kind = kindOf(execution.workflowId);
    if (!kind || (only !== undefined && !only.includes(kind))) continue;
    const history = await stack.client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory();
    const name = `${execution.workflowId.replace(/[^\w@.-]+/g, '_')}@${execution.runId}.json`;
    // The workflow id too: the code under replay reads it (shard children are named after it).
    const recorded = { workflowId: execution.workflowId, runId: execution.runId, history: History.toObject(History.fromObject(history), HISTORY_JSON) };
    await writeFile(path.join(HISTORIES, name), JSON.stringify(recorded));
    saved++;
  }
  console.log(`saved ${saved} histories to ${HISTORIES}`);
} finally {
  await stack.stop();
  await rm(dir, { recursive: true, force: true });
}
