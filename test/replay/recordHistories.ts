/**
 * Records the histories the replay test (test/unit/workflowReplay.test.ts) replays: real builds on
 * a Temporal dev server, the simulator and a local output, one per kind of history a running build
 * can have: a single shard, shards failed then retried through the retryFailedShards update, a
 * build that continues as new, a Batch API wait on durable timers, a scheduled (dated) run, and a
 * multiturn build (its shards run the chat stages), a build stopped by its hard budget (llm.budget); evaluations (`mmif eval`'s evaluateModel):
 * single-turn with a judge, and multi-turn chats; and a task queue's lease desk (endpointLeases)
 * through two workers' reports, a continue-as-new and its idle end.
 * Every execution they leave (parents, shard children, each continued run) is saved as
 * `histories/<workflowId>@<runId>.json` ({workflowId, runId, history}): the history message as protobuf.js objects (longs, enums and
 * bytes as strings), read back with History.fromObject. Not the `temporal workflow show` JSON:
 * the SDK's reader of that (historyFromJSON) fails in this install, whose @temporalio/common carries
 * its own protobufjs major version.
 *
 *   node --import tsx test/replay/recordHistories.ts              # every kind (replaces all)
 *   node --import tsx test/replay/recordHistories.ts --only eval  # adds the evaluations' histories, keeps the rest
 *   node --import tsx test/replay/recordHistories.ts --only multiturn  # adds the multiturn build's, keeps the rest
 *   node --import tsx test/replay/recordHistories.ts --only leases     # adds the lease desk's (~4 min: it waits for its idle end)
 *   node --import tsx test/replay/recordHistories.ts --only budget     # adds a build stopped by its hard budget
 *   node --import tsx test/replay/recordHistories.ts --only checks     # adds `mmif build`'s checks (buildChecks)
 *   node --import tsx test/replay/recordHistories.ts --only progress   # adds a build whose shards keep live counters (shardProgress) and whose retry restarts the rate
 *   node --import tsx test/replay/recordHistories.ts --only batch,targets,cancelled  # adds a Batch API wait in an activity (batch-wait-in-activity), a build topping up to targets, a cancelled build
 *   node --import tsx test/replay/recordHistories.ts --only resolved   # adds a build, an eval and a bad config resolved by an activity (config-resolved-outside-workflow)
 *   node --import tsx test/replay/recordHistories.ts --only workflow-id  # adds a build under its buildId and one refused under another id (workflow-id-is-build-id)
 *   node --import tsx test/replay/recordHistories.ts --only slice-flow   # adds a build whose slices run all their stages in one activity each (samples-flow-through-slice)
 *   node --import tsx test/replay/recordHistories.ts --only overlap      # adds targets builds whose top-up rounds overlap (overlapped-top-up-rounds): one planned from a forecast, one by the exact call
 *   node --import tsx test/replay/recordHistories.ts --only lanes        # adds a build whose shards in flight feed its sample lanes (shards-feed-sample-lanes) and whose slices share them (slices-share-sample-lanes)
 *   node --import tsx test/replay/recordHistories.ts --only forecast-rule  # adds an overlapped build forecast from its first-started shards (forecast-from-first-started)
 *
 * Re-record only for a release that deliberately breaks running builds (see docs/operations.md, "Operating in
 * production"); a compatible change keeps the old histories and passes them via patched().
 */
import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
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

const KINDS = [
  'eval',
  'multiturn',
  'leases',
  'budget',
  'checks',
  'progress',
  'batch',
  'targets',
  'cancelled',
  'resolved',
  'workflow-id',
  'slice-flow',
  'overlap',
  'lanes',
  'forecast-rule',
] as const;
type Kind = (typeof KINDS)[number];
/** `--only a,b`: the kinds to add, keeping the other histories; without it every kind, replacing all. */
const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1]!.split(',') : undefined;
for (const kind of only ?? []) if (!(KINDS as readonly string[]).includes(kind)) throw new Error(`--only takes ${KINDS.join(', ')}, got ${kind}`);
const recording = (kind: Kind) => only === undefined || only.includes(kind);
/** The lease desk's own queue: the builds' model calls lease on the stack's queue, and must not mix in. */
const LEASE_QUEUE = 'mmif-replay-leases';

/** The kind of history an execution recorded here is (for `--only`). */
function kindOf(execution: { type: string; workflowId: string }): Kind | 'builds' {
  if (/^(eval-)?replay-resolved/.test(execution.workflowId)) return 'resolved';
  if (execution.type === 'evaluateModel') return 'eval';
  if (execution.type === 'buildChecks') return 'checks';
  if (execution.workflowId === endpointLeasesWorkflowId(LEASE_QUEUE)) return 'leases';
  const prefixes: Array<[string, Kind]> = [
    ['replay-multiturn', 'multiturn'],
    ['replay-budget', 'budget'],
    ['replay-progress', 'progress'],
    ['replay-batch-wait', 'batch'],
    ['replay-targets', 'targets'],
    ['replay-cancelled', 'cancelled'],
    ['replay-workflow-id', 'workflow-id'],
    ['replay-slice-flow', 'slice-flow'],
    ['replay-overlap', 'overlap'],
    ['replay-lanes', 'lanes'],
    ['replay-forecast-rule', 'forecast-rule'],
  ];
  return prefixes.find(([prefix]) => execution.workflowId.startsWith(prefix))?.[1] ?? 'builds';
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

  const recordBuilds = async (): Promise<void> => {
    await run('replay-single-shard', config('replay-single-shard', { maxSamples: 2 }));
    await run('replay-continue-as-new', config('replay-continue-as-new', { shardsPerRun: 1, maxParallelShards: 1 }));
    await run(
      'replay-batch-api',
      config('replay-batch-api', { maxSamples: 2, batchApi: { pollSeconds: 1, maxResubmits: 1 }, models: { default: { model: 'mmif-sim-vlm', batch: true } } }),
    );

    // Every request refused until the build waits in its retry window; then the update retries the shards.
    stack.simulator.setFaults({ rate500: 1 });
    const failing = await stack.client.workflow.start('buildDataset', {
      taskQueue: stack.taskQueue,
      workflowId: 'replay-failed-then-retried',
      args: [config('replay-failed-then-retried', { retryWindowSeconds: 300, llm: { preflight: false, retry: { maxAttempts: 1, baseDelayMs: 50, maxDelayMs: 100 } } })],
    });
    await eventually(async () => (await failing.query<BuildProgress>('progress')).phase === 'waiting-for-retry', 120_000, 'the retry window');
    stack.simulator.setFaults({ rate500: 0 });
    await failing.executeUpdate('retryFailedShards');
    await failing.result();

    const scheduled = config('replay-scheduled');
    await stack.client.schedule.create({
      scheduleId: 'replay-nightly',
      spec: { cronExpressions: ['0 3 * * *'] },
      action: { type: 'startWorkflow', workflowType: 'scheduledBuild', taskQueue: stack.taskQueue, workflowId: 'replay-scheduled', args: [scheduled] },
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
  };

  /**
   * The lease desk of LEASE_QUEUE, fed scripted reports (as workers send them) for one endpoint with
   * a cap of 8: worker a alone gets all of it; b joins and its unchanged answer is held back until a's
   * requests end down to its half; a's unchanged answer ends by the HOLD_MS timer; a newer report of
   * b supersedes its waiting one; a run of reports with changed answers grows the history until the
   * desk continues as new (releasing b's waiting report); in the new run a fleet of more workers than
   * the desk holds reports for gets its fair shares (some answered at once, with `again`); then all
   * release and the desk ends after its idle wait. Reports carry `leaseTerms` (this release's
   * workers); the desk grants with terms (patch 'lease-desk-lease-terms') and says so in `termMs`.
   * First (patch 'lease-desk-owed-first'), on a desk started with x, y and z holding 2 each of a cap
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
        leaseTerms: true,
        endpoints: [{ endpoint, cap, inFlight, queued, holding, drainMs: 1_000 }],
      });
    const report = reportOn('replay-endpoint', 8);
    const grant = async (answer: Promise<{ grants: Record<string, number>; superseded?: boolean }>) => (await answer).grants['replay-endpoint'];
    const desk = stack.client.workflow.getHandle(endpointLeasesWorkflowId(LEASE_QUEUE));

    const term = Date.now() + 10 * 60_000;
    const holder = { cap: 6, demand: 2, holds: 2, grant: 2, seenAt: Date.now(), until: term };
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

    const firstRun = (await desk.describe()).runId;
    for (let i = 0; (await desk.describe()).runId === firstRun; i++) {
      assert.ok(i < 2_000, 'the lease desk continues as new');
      await report('a', 0, 10, 0).catch(() => undefined); // one landing on the closing run is answered by nobody
    }
    assert.equal(await bNewer, 4, "b's waiting report is answered before the desk continues as new");
    assert.equal(await grant(report('b', 4, 0, 4)), 4);
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
            leaseTerms: true,
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

  // Evaluations: a one-sample split (a rule and a judged constraint), and two one-image chats.
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
  await writeFile(
    path.join(data, 'chats.jsonl'),
    ['c1', 'c2'].map((id) => `${JSON.stringify({ id, image: 'scene.jpg', questions: ['What is shown?', 'Describe the colours.', 'Where is it?'] })}\n`).join(''),
  );
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
  if (recording('eval')) {
    await runEval(evaluation('replay-eval-single', { judge: { model: 'mmif-sim-vlm' } }));
    await runEval(evaluation('replay-eval-chats', { chats: { uri: path.join(data, 'chats.jsonl'), maxInstructions: 2 } }));
  }

  if (only === undefined) await recordBuilds();
  // A multiturn build: its shard children run image -> instruction -> constraints -> chat.
  if (recording('multiturn'))
    await run('replay-multiturn', config('replay-multiturn', { maxSamples: 2, mode: 'multiturn', chat: { turns: 3, maxInstructions: 2 }, verification: { maxRegenerations: 6 } }));
  // A build whose hard budget runs out: its shards fail with BudgetExhausted and it stops (patched 'budget-stops-build').
  if (recording('budget')) {
    const budgeted = config('replay-budget', {
      llm: { preflight: false, budget: { maxRequests: 3 }, prices: { 'mmif-sim-vlm': { inputPerMTok: 2, outputPerMTok: 8, batchDiscount: 0.5 } } },
    });
    await assert.rejects(run('replay-budget', budgeted), (err: { cause?: Error }) => /^budget exhausted: 3 of 3 requests sent/.test(err.cause?.message ?? ''));
  }
  // `mmif build`'s checks: one that passes (and runs the pre-flight), one that finds a problem.
  if (recording('checks')) {
    const check = (id: string, input: BuildConfigInput) => stack.client.workflow.execute('buildChecks', { taskQueue: stack.taskQueue, workflowId: `${id}/checks`, args: [input] });
    await check('replay-checks', config('replay-checks'));
    await check('replay-checks-wrong-path', config('replay-checks-wrong-path', { sources: [{ type: 'cc3m', uri: path.join(dir, 'missing') }] }));
  }
  // Live progress: slice outcomes carry their requests and faults, shards keep counters behind a
  // query, the build lists its running shards and restarts its rate when failed shards are retried.
  if (recording('progress')) {
    stack.simulator.setFaults({ rate500: 1 });
    const llm = { preflight: false, retry: { maxAttempts: 1, baseDelayMs: 50, maxDelayMs: 100 } };
    const failing = await stack.client.workflow.start('buildDataset', {
      taskQueue: stack.taskQueue,
      workflowId: 'replay-progress',
      args: [config('replay-progress', { maxSamples: 4, retryWindowSeconds: 300, llm, models: { default: { model: 'mmif-sim-vlm', requestsPerMinute: 6000 } } })],
    });
    await eventually(async () => (await failing.query<BuildProgress>('progress')).phase === 'waiting-for-retry', 120_000, 'the retry window');
    stack.simulator.setFaults({ rate500: 0 });
    await failing.executeUpdate('retryFailedShards');
    await failing.result();
  }
  // A Batch API wait as the current code runs it: one activity waits for the batch, heartbeating
  // (patched 'batch-wait-in-activity'; replay-batch-api above predates it and polls on timers).
  if (recording('batch')) {
    await run(
      'replay-batch-wait',
      config('replay-batch-wait', { maxSamples: 2, batchApi: { pollSeconds: 1, maxResubmits: 1 }, models: { default: { model: 'mmif-sim-vlm', batch: true } } }),
    );
  }
  // A build with targets: it tops up in rounds (planTopUp, targetTallies) and trims to the goals.
  if (recording('targets')) {
    await run('replay-targets', config('replay-targets', { maxSamples: 6, targets: { instruct: 3, expectedYield: 1, maxRounds: 4 } }));
  }
  // A build with targets whose rounds overlap (patched 'overlapped-top-up-rounds'): shards commit as
  // rank order allows, and the next round is planned from a forecast (planTopUp forecast). Most answers
  // break a constraint, so the first round falls short and a top-up round is planned.
  if (recording('overlap')) {
    stack.simulator.setFaults({ complianceRate: 0.2 });
    await run('replay-overlap', config('replay-overlap', { maxSamples: 6, shardSize: 1, targets: { instruct: 3, expectedYield: 1, maxRounds: 4 } }));
    // Without forecasts: the exact call after the first round plans the top-up, and the kept counts
    // are read again after it (it may have committed shards again: output/commit/recommitTrimmed.ts).
    await run(
      'replay-overlap-exact',
      config('replay-overlap-exact', { maxSamples: 6, shardSize: 1, targets: { instruct: 3, expectedYield: 1, maxRounds: 4, overlapRounds: false } }),
    );
    stack.simulator.setFaults({ complianceRate: DEFAULT_TUNING.complianceRate });
  }
  // Overlapped rounds whose forecast is taken from the round's first-started half (patched
  // 'forecast-from-first-started': the marker, the rule carried, planTopUp's `basis`); the first round
  // falls short, as above.
  if (recording('forecast-rule')) {
    stack.simulator.setFaults({ complianceRate: 0.2 });
    await run('replay-forecast-rule', config('replay-forecast-rule', { maxSamples: 6, shardSize: 1, targets: { instruct: 3, expectedYield: 1, maxRounds: 4 } }));
    stack.simulator.setFaults({ complianceRate: DEFAULT_TUNING.complianceRate });
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
  // Configs resolved by an activity outside the sandbox (patched 'config-resolved-outside-workflow'):
  // a build, an evaluation, and a config that does not parse.
  if (recording('resolved')) {
    await run('replay-resolved', config('replay-resolved', { maxSamples: 2 }));
    await runEval(evaluation('replay-resolved-eval'));
    await assert.rejects(run('replay-resolved-bad', config('replay-resolved-bad', { maxSamples: 0 })), (err: { cause?: Error }) =>
      /^invalid build config: maxSamples/.test(err.cause?.message ?? ''),
    );
  }
  // A build under its buildId as workflow id, and one under another id, refused (patched 'workflow-id-is-build-id').
  if (recording('workflow-id')) {
    await run('replay-workflow-id', config('replay-workflow-id', { maxSamples: 2 }));
    await assert.rejects(run('replay-workflow-id-other', config('replay-workflow-id')), (err: { cause?: Error }) =>
      /^workflow id 'replay-workflow-id-other' is not the config's buildId/.test(err.cause?.message ?? ''),
    );
  }
  // Slices through all their stages in one activity each, every sample on its own (patched 'samples-flow-through-slice').
  if (recording('slice-flow')) await run('replay-slice-flow', config('replay-slice-flow', { maxSamples: 4, sliceSize: 1 }));
  // Shards in flight sized from the endpoint's slots, maxParallelShards unset (patched
  // 'shards-feed-sample-lanes'), whose slices wait for the worker's shared lanes ('slices-share-sample-lanes').
  if (recording('lanes')) await run('replay-lanes', config('replay-lanes', { maxSamples: 4, shardSize: 1, sliceSize: 1 }));
  // Last, once no build calls a model: this process's limiters are shared by its workers, and a
  // worker on LEASE_QUEUE would report the builds' demand to the desk too.
  if (recording('leases')) await recordLeases();
  if (only === undefined) await rm(HISTORIES, { recursive: true, force: true });
  await mkdir(HISTORIES, { recursive: true });
  let saved = 0;
  for await (const execution of stack.client.workflow.list()) {
    if (execution.status.name === 'RUNNING') continue;
    if (only !== undefined && !only.includes(kindOf(execution))) continue;
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
