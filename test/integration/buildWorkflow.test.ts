/**
 * buildDataset's logic with stubbed activities on the time-skipping server (test/harness/stubbedBuild.ts):
 * - the retry window: a failed shard waits for `retryFailedShards`, which re-runs it; once the build
 *   is finalizing, the update's validator refuses it (no trace in history) and the build completes;
 *   with no update, the build fails with its one line when the window ends;
 * - top-up rounds: whatever order the shards finish in, each shard keeps the same records (the
 *   lowest-ranked accepted ones), the plan grows the same rounds (the next one forecast while the
 *   last wave of shards runs), and the targets are met exactly.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { WorkflowHandle } from '@temporalio/client';
import { WorkflowFailedError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import proto from '@temporalio/proto';
import type { ShardSummary } from '../../activities/buildRef.js';
import { parseBuildConfig, type BuildConfigInput } from '../../config/buildConfig.js';
import { forecastBasis, nextRound, outstandingSamples, RECORD_KINDS, sourceGoals, firstRoundSizes, type Goals, type SourceTally } from '../../domain/targets.js';
import { planShape } from '../../domain/planShape.js';
import type { ReplicaTally } from '../../domain/replicaShares.js';
import type { BuildPlan } from '../../pipeline/planning/planBuild.types.js';
import { progressQuery, retryFailedShardsUpdate } from '../../workflows/buildDataset.js';
import { eventually } from '../harness/datasetChecks.js';
import { stubSummary } from '../harness/shardSummaries.js';
import { startStubbedBuilds, stubPlan, stubReport, type BuildActivities, type StubbedStack } from '../harness/stubbedBuild.js';

// CommonJS: its namespaces come through the default export.
const { EventType } = proto.temporal.api.enums.v1;
/** The replica the stubbed shards' requests went to. */
const REPLICA = 'http://gpu0:8000/v1';

/** The world the stubs answer from, per build id. */
interface StubBuild {
  plan: BuildPlan;
  /** Shard -> seconds it runs and whether it fails, per attempt. */
  outcome(shard: number, attempt: number): { seconds: number; error?: string };
  attempts: Map<number, number>;
  /** Shard -> records its samples accepted (before caps). */
  accepted(shard: number): { instruct: number; dpo: number };
  committed: Map<number, ShardSummary>;
  /** Opened by the test to let finalizeBuild answer. */
  finalizeGate?: Promise<void>;
  finalizedAt?: number;
  /** The replica counts finalizeBuild was given. */
  replicas?: ReplicaTally;
  goals?: Goals[];
  config?: ReturnType<typeof parseBuildConfig>;
  /** Each round planned from a forecast, with the shards not committed when it was. */
  forecasts: Array<{ round: number; uncommitted: number }>;
  /** Every forecast fails: the exact call plans each round. */
  forecastFails?: boolean;
}

const builds = new Map<string, StubBuild>();
let stack: StubbedStack;

const stubs: BuildActivities = {
  preflightEndpoints: async () => assert.fail('pre-flight is off in these builds'),
  planBuild: async (input) => shapeOf((input as { buildId: string }).buildId),
  shardOutcome: async ({ shard, sampleCount, deferCommit }) => {
    const b = buildOf(shard, sampleCount);
    const attempt = (b.attempts.get(shard) ?? 0) + 1;
    b.attempts.set(shard, attempt);
    const { seconds, error } = b.outcome(shard, attempt);
    if (error) return { seconds, error, summary: null };
    // A shard the build commits itself reports its run's tallies: one attempt routed per sample.
    if (deferCommit)
      return { seconds, summary: null, tallies: { failedAttempts: { transient: 1 }, replicas: { [REPLICA]: { routed: sampleCount, spilled: 0, rerouted: 0, ejections: 0 } } } };
    const { instruct, dpo } = b.accepted(shard);
    const summary = stubSummary(shard, sampleCount, instruct, dpo);
    b.committed.set(shard, summary);
    return { seconds, summary };
  },
  committedShards: async ({ build, from, to }) => {
    const b = builds.get(build.buildId)!;
    const shards = [...b.committed.keys()].filter((s) => s >= from && s < to).sort((x, y) => x - y);
    const total = stubSummary(-1, 0, 0, 0);
    return { shards, total, reopened: [], kept: shards.map((s) => [s, b.committed.get(s)!.instruct, b.committed.get(s)!.dpo] as [number, number, number]) };
  },
  committedShard: async ({ build, shard }) => builds.get(build.buildId)!.committed.get(shard) ?? null,
  commitShard: async ({ build, shard, caps }) => {
    const b = builds.get(build.buildId)!;
    const accepted = b.accepted(shard);
    const keep = (kind: 'instruct' | 'dpo') => Math.min(accepted[kind], caps?.[kind] ?? accepted[kind]);
    const summary = stubSummary(shard, b.plan.shardSizes[shard]!, keep('instruct'), keep('dpo'));
    b.committed.set(shard, summary);
    return summary;
  },
  planTopUp: async ({ config, round, forecast }) => {
    const buildId = (config as { buildId: string }).buildId;
    const b = builds.get(buildId)!;
    if (b.plan.rounds.length > round) return shapeOf(buildId);
    const counted = forecast ? forecastBasis(b.plan, forecast.lastWave) : range(b.plan.shardCount);
    assert.ok(counted, `round ${round} is forecast only from a round larger than its last wave`);
    assert.ok(
      counted.every((shard) => b.committed.has(shard)),
      `round ${round} is planned once ${forecast ? 'its basis' : 'every shard'} is committed`,
    );
    if (forecast) b.forecasts.push({ round, uncommitted: b.plan.shardCount - b.committed.size });
    if (forecast && b.forecastFails) throw ApplicationFailure.nonRetryable('the stub forecast failed');
    const next = nextRound(b.config!, b.plan.rounds.length, tallies(b, b.plan, counted), forecast ? outstandingSamples(b.plan, sourcesOf(b).length, counted) : []);
    if ('outcome' in next) {
      if (!forecast) b.plan = { ...b.plan, targetsOutcome: next.outcome };
      return shapeOf(buildId);
    }
    b.plan = addRound(b.plan, next.sizes, b.config!.shardSize);
    return shapeOf(buildId);
  },
  finalizeBuild: async ({ build, shardCount, failed, replicas }) => {
    const b = builds.get(build.buildId)!;
    b.replicas = replicas;
    b.finalizedAt = await stack.env.currentTimeMs();
    await b.finalizeGate;
    return stubReport(build.buildId, shardCount, failed);
  },
};

/** The build whose plan has this shard: the stub shard child is told its shard and size, not its build. */
function buildOf(shard: number, sampleCount: number): StubBuild {
  const running = [...builds.values()].filter((b) => b.plan.shardSizes[shard] === sampleCount && !b.finalizedAt);
  assert.equal(running.length, 1, 'one build runs at a time');
  return running[0]!;
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);
/** The build's plan as the planning activities return it: by reference. */
const shapeOf = (buildId: string) => planShape(builds.get(buildId)!.plan, `${buildId}/_work/plan/summary.json`);
const sourcesOf = (b: StubBuild) => b.goals!.map((_, i) => i);

function tallies(b: StubBuild, plan: BuildPlan, shards: number[]): SourceTally[] {
  const t: SourceTally[] = sourcesOf(b).map(() => ({ planned: 0, instruct: 0, dpo: 0, exhausted: false }));
  for (const shard of shards) {
    const summary = b.committed.get(shard);
    if (!summary) continue;
    const tally = t[plan.shardSources[shard]!]!;
    tally.planned += plan.shardSizes[shard]!;
    tally.instruct += summary.instruct;
    tally.dpo += summary.dpo;
  }
  return t;
}

/** Appends a round: each source's samples in shards of `shardSize`, source after source. */
function addRound(plan: BuildPlan, sizes: number[], shardSize: number): BuildPlan {
  const shardSizes = [...plan.shardSizes];
  const shardSources = [...plan.shardSources];
  for (const [source, n] of sizes.entries()) {
    for (let left = n; left > 0; left -= shardSize) {
      shardSizes.push(Math.min(shardSize, left));
      shardSources.push(source);
    }
  }
  const added = sizes.reduce((a, b) => a + b, 0);
  return { ...plan, shardSizes, shardSources, shardCount: shardSizes.length, sampleCount: plan.sampleCount + added, rounds: [...plan.rounds, plan.shardCount] };
}

function config(buildId: string, overrides: Partial<BuildConfigInput> = {}): BuildConfigInput {
  return {
    buildId,
    seed: 1,
    output: `/nonexistent/${buildId}`,
    sources: [{ type: 'cc3m', uri: '/nonexistent/cc3m' }],
    maxSamples: 4,
    shardSize: 2,
    llm: { preflight: false },
    models: { default: { model: 'stub' } },
    ...overrides,
  };
}

before(async () => {
  stack = await startStubbedBuilds('mmif-stubbed-builds', stubs);
});

after(async () => {
  await stack?.stop();
});

async function run(input: BuildConfigInput): Promise<WorkflowHandle> {
  await stack.env.client.workflow.start('buildDataset', { taskQueue: stack.taskQueue, workflowId: input.buildId, args: [input] });
  return stack.env.client.workflow.getHandle(input.buildId);
}

const phase = async (handle: WorkflowHandle) => (await handle.query(progressQuery)).phase;

test('the retry window: the update re-runs a failed shard; once finalizing, the validator refuses it without a trace and the build completes', async () => {
  let open = () => {};
  const input = config('retry-window', { retryWindowSeconds: 3600 });
  builds.set(input.buildId, {
    plan: stubPlan([2, 2]),
    outcome: (shard, attempt) => (shard === 1 && attempt === 1 ? { seconds: 0, error: 'the stub shard failed' } : { seconds: 0 }),
    attempts: new Map(),
    accepted: () => ({ instruct: 2, dpo: 1 }),
    committed: new Map(),
    forecasts: [],
    finalizeGate: new Promise<void>((resolve) => (open = resolve)),
  });
  const handle = await run(input);
  try {
    await eventually(async () => (await phase(handle)) === 'waiting-for-retry', 60_000, 'the build waiting for a retry');
    assert.deepEqual((await handle.query(progressQuery)).failedShards, [{ shard: 1, error: 'the stub shard failed' }]);
    assert.deepEqual(await handle.executeUpdate(retryFailedShardsUpdate), { retrying: [1] });
    await eventually(async () => (await phase(handle)) === 'finalizing', 60_000, 'the build finalizing');
    assert.equal(builds.get(input.buildId)!.attempts.get(1), 2, 'the update ran the failed shard again');
    await assert.rejects(handle.executeUpdate(retryFailedShardsUpdate), (err: unknown) => {
      assert.ok(err instanceof WorkflowUpdateFailedError, String(err));
      assert.match(String((err as Error & { cause?: Error }).cause?.message), /^build retry-window is finalizing: no shard can be retried in this run$/);
      return true;
    });
    open();
    const report = await handle.result();
    assert.deepEqual(report.shards, { planned: 2, committed: 2, failed: 0 });
  } finally {
    open(); // also when an assertion failed: the worker could not stop while finalizeBuild waits
  }
  const events = (await handle.fetchHistory()).events ?? [];
  const accepted = events.filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED);
  assert.equal(accepted.length, 1, 'the refused update left no event in the history');
});

test('the retry window ends with no update: finalizing starts when it ends, and the build fails with its one line', async () => {
  const input = config('window-ends', { retryWindowSeconds: 3600 });
  const b: StubBuild = {
    plan: stubPlan([2, 2]),
    outcome: (shard) => (shard === 0 ? { seconds: 0, error: 'shard 0 never works' } : { seconds: 0 }),
    attempts: new Map(),
    accepted: () => ({ instruct: 2, dpo: 2 }),
    committed: new Map(),
    forecasts: [],
  };
  builds.set(input.buildId, b);
  const startedAt = await stack.env.currentTimeMs();
  const handle = await run(input);
  await assert.rejects(handle.result(), (err: unknown) => {
    assert.ok(err instanceof WorkflowFailedError, String(err));
    assert.equal(err.cause?.message, '1 of 2 shards failed (report: out/window-ends/build-report.json): shard 0: shard 0 never works');
    return true;
  });
  assert.ok(b.finalizedAt! - startedAt >= 3600_000, `finalized ${b.finalizedAt! - startedAt} ms after the start: the whole window was waited`);
  assert.equal(b.attempts.get(0), 1, 'nothing re-ran the failed shard');
});

/**
 * A targets build of shards of 4 samples, 3 at once, over `sources`, its round 0 planned: a yield
 * that varies by shard, so the first round falls short and the build tops up. Registered for the stubs.
 */
function roundsBuild(buildId: string, seconds: (shard: number) => number, { sources, instruct }: { sources: string[]; instruct: number }) {
  const input = config(buildId, {
    sources: sources.map((uri) => ({ type: 'cc3m', uri })),
    maxSamples: 400,
    shardSize: 4,
    maxParallelShards: 3,
    targets: { instruct, expectedYield: 0.9 },
  });
  const resolved = parseBuildConfig(input);
  const b: StubBuild = {
    plan: addRound({ ...stubPlan([]), rounds: [] }, firstRoundSizes(resolved), resolved.shardSize),
    outcome: (shard) => ({ seconds: seconds(shard) }),
    attempts: new Map(),
    accepted: (shard) => ({ instruct: [1, 3, 2, 4][shard % 4]!, dpo: [0, 2, 2, 3][shard % 4]! }),
    committed: new Map(),
    forecasts: [],
    goals: sourceGoals(resolved),
    config: resolved,
  };
  builds.set(input.buildId, b);
  return { input, b };
}

/** Seconds each shard runs, so that shards finish in rank order, in reverse, or odd ones first. */
const ORDERINGS: Record<string, (shard: number) => number> = {
  'rank order': (shard) => 60 + shard,
  reverse: (shard) => 6000 - 60 * shard,
  'odd shards first': (shard) => (shard % 2 === 1 ? 60 + shard : 3000 + shard),
};

test('top-up rounds: whatever order the shards finish in, each keeps the same records, the rounds are the same (forecast while the last wave runs) and the targets are met exactly', async () => {
  const results: Record<string, { kept: string; rounds: number[]; forecasts: number[]; finishOrder: number[] }> = {};
  for (const [name, seconds] of Object.entries(ORDERINGS)) {
    const { input, b } = roundsBuild(`rounds-${name.replace(/ /g, '-')}`, seconds, { sources: ['/nonexistent/a', '/nonexistent/b'], instruct: 40 });
    const handle = await run(input);
    await handle.result();

    const goals = b.goals!;
    assert.equal(b.plan.targetsOutcome, 'targets-met', name);
    assert.ok(b.plan.rounds.length > 1, `${name}: the build topped up`);
    // Round 1 was planned from a forecast while round 0's last wave still ran (3 shards at once).
    assert.equal(b.forecasts[0]?.round, 1, `${name}: round 1 forecast`);
    assert.ok(b.forecasts[0]!.uncommitted > 0, `${name}: forecast with ${b.forecasts[0]!.uncommitted} shards of round 0 not committed`);
    assert.equal(b.committed.size, b.plan.shardCount, `${name}: every shard committed`);
    assert.equal(
      b.replicas?.[REPLICA]?.routed,
      b.plan.shardSizes.reduce((n, s) => n + s, 0),
      `${name}: every shard's run counted in the build's replica shares`,
    );
    // The lowest-ranked accepted records: walking each source's shards in rank order, each keeps
    // what it accepted up to what its source still owes.
    const owed = goals.map((g) => ({ ...g }));
    for (let shard = 0; shard < b.plan.shardCount; shard++) {
      const source = b.plan.shardSources[shard]!;
      for (const kind of RECORD_KINDS) {
        if (owed[source]![kind] === undefined) continue;
        const expected = Math.min(b.accepted(shard)[kind], owed[source]![kind]!);
        assert.equal(b.committed.get(shard)![kind], expected, `${name}: shard ${shard} keeps ${expected} ${kind}`);
        owed[source]![kind]! -= expected;
      }
    }
    assert.ok(
      owed.every((o) => (o.instruct ?? 0) === 0),
      `${name}: each source's instruct target met exactly: ${JSON.stringify(owed)}`,
    );
    const events = (await handle.fetchHistory()).events ?? [];
    const finishOrder = events
      .filter((e) => e.eventType === EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED)
      .map((e) => Number(/shard-(\d+)$/.exec(e.childWorkflowExecutionCompletedEventAttributes!.workflowExecution!.workflowId!)![1]));
    results[name] = {
      kept: JSON.stringify([...b.committed.values()].sort((x, y) => x.shard - y.shard).map((s) => [s.shard, s.instruct, s.dpo])),
      rounds: b.plan.rounds,
      forecasts: b.forecasts.map((f) => f.round),
      finishOrder,
    };
  }
  const [first, ...others] = Object.entries(results);
  for (const [name, result] of others) {
    assert.equal(result.kept, first![1].kept, `${name} keeps what ${first![0]} keeps`);
    assert.deepEqual(result.rounds, first![1].rounds, `${name} plans the rounds ${first![0]} plans`);
    assert.deepEqual(result.forecasts, first![1].forecasts, `${name} forecasts the rounds ${first![0]} forecasts`);
    assert.notDeepEqual(result.finishOrder, first![1].finishOrder, `${name}: the shards finished in another order`);
  }
});

test('a failed forecast leaves its round to the exact call: the build tops up once every shard is committed and meets its targets', async () => {
  const { input, b } = roundsBuild('rounds-forecast-fails', ORDERINGS['rank order']!, { sources: ['/nonexistent/a'], instruct: 20 });
  b.forecastFails = true;
  const handle = await run(input);
  await handle.result();
  assert.ok(b.forecasts.length > 0, 'a forecast was tried');
  assert.ok(b.plan.rounds.length > 1, 'the exact call planned the next round');
  assert.equal(b.plan.targetsOutcome, 'targets-met');
  assert.equal(
    [...b.committed.values()].reduce((n, s) => n + s.instruct, 0),
    20,
  );
});
