/**
 * A whole build: validate the config, plan shards deterministically, run one child workflow per
 * shard (id `<this workflow's id>/shard-<n>`) with bounded parallelism, then write the build report.
 *
 * A failed shard does not stop the others. When shards failed, the build waits up to
 * `retryWindowSeconds` for a `retryFailedShards` update, then writes its report and fails with a
 * message listing them, so `temporal workflow start --id-reuse-policy AllowDuplicateFailedOnly`
 * (or `mmif resume`) can re-run it: committed shards are skipped, except those holding samples
 * rejected by model-call errors, which are re-opened (llm.rerunModelCallRejects). Cancelling stops the running
 * shards; committed shards stay valid. History stays small because children carry the per-sample
 * work; the workflow drains its shards and continues as new when Temporal suggests it.
 */
import {
  ApplicationFailure,
  CancellationScope,
  condition,
  continueAsNew,
  defineQuery,
  defineUpdate,
  executeChild,
  isCancellation,
  patched,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type * as activities from '../activities/index.js';
import type { BuildRef, ShardSummary } from '../activities/buildRef.js';
import type { BuildConfig } from '../config/buildConfig.js';
import { batchStages, endpointSlots, requestsPerSecondLimit, stageTaskQueues } from '../config/endpointRouting.js';
import type { BuildReport } from '../output/contracts/buildReport.js';
import type { BuildPlan } from '../pipeline/planning/planBuild.types.js';
import { workflowIdRefusal } from '../domain/buildWorkflowId.js';
import { capsWhenDue, type Kept } from '../domain/commitOrder.js';
import { mapLimit } from '../domain/mapLimit.js';
import { MIN_SHARDS_IN_FLIGHT, shardsToFeedLanes } from '../domain/sampleLanes.js';
import { stagesFor } from '../config/stages.js';
import { commitCaps, forecastBasis, sourceGoals, startOrder, type ForecastRule, type Goals } from '../domain/targets.js';
import { pipelineActivityOptions } from './activityOptions.js';
import { newProgress, recordCommittedShard, restartRate, type BuildPhase, type BuildProgress } from './buildProgress.js';
import { buildShard } from './buildShard.js';
import { buildConfigInput } from './configInput.js';
import { MMIF_BUILD_ID, MMIF_SOURCE, MMIF_STATUS } from './searchAttributes.js';

/** Slices of one shard in flight at once: enough to overlap model latency, few enough to keep order. */
const PARALLEL_SLICES_PER_SHARD = 4;

/** Shards whose manifests one activity call checks when a build (re)starts. */
const COMMIT_CHECK_CHUNK = 1000;

/** What a run hands to the next one when it continues as new. */
export interface CarriedProgress {
  plan: BuildPlan;
  /** Shards still to run, in order, and how far this list has been started. */
  pending: number[];
  nextPending: number;
  retryQueue: number[];
  progress: BuildProgress;
  /** A targets build's overlapped rounds (absent from runs of the sequential ones, which replay as they were). */
  rounds?: RoundsState;
}

/** Where the overlapped rounds of a targets build stand: what commits and top-up planning go on from. */
interface RoundsState {
  /** What each committed shard kept. */
  kept: Array<[shard: number, instruct: number, dpo: number]>;
  /** Shards that have run and wait to commit behind an earlier shard of their source (domain/commitOrder.ts). */
  finished: number[];
  /** How many rounds the plan had when the next one was last planned from a forecast (0: never). */
  forecastAt: number;
  /** The shards a forecast is taken from and the order a round starts in (absent from builds started before the choice: `source-halves`). */
  forecastRule?: ForecastRule;
}

/**
 * Versioning marker: a targets build commits each shard as soon as its rank order allows and plans
 * the next round from a forecast while the current one still runs. Builds started before run their
 * rounds one after another (commitRoundInOrder), as their histories recorded.
 */
const OVERLAPPED_ROUNDS = 'overlapped-top-up-rounds';

/**
 * Versioning marker: a round's shards start with each source's first shard leading, and the forecast
 * is taken from the first half of the round in that order (domain/targets.ts ForecastRule
 * `first-started`). Builds started before keep `source-halves`; a continued run carries its rule.
 */
const FORECAST_FROM_FIRST_STARTED = 'forecast-from-first-started';

export const progressQuery = defineQuery<BuildProgress>('progress');
/** Re-runs the failed shards of a running or finished-but-waiting build; returns the shards retried. */
export const retryFailedShardsUpdate = defineUpdate<{ retrying: number[] }>('retryFailedShards');

/** Phases in which a retryFailedShards update can still run shards. */
const RETRYABLE_PHASES: readonly BuildPhase[] = ['planning', 'running', 'waiting-for-retry'];

/** The buildId of a config input not yet resolved (empty when it has none: resolving fails it). */
function inputBuildId(input: unknown): string {
  const buildId = typeof input === 'object' && input !== null ? (input as { buildId?: unknown }).buildId : undefined;
  return typeof buildId === 'string' ? buildId : '';
}

export async function buildDataset(input: unknown, carried?: CarriedProgress): Promise<BuildReport> {
  // The query answers from the first activation: the config is resolved by an activity, and
  // `mmif status` (or `build --wait`) may ask while it runs.
  const progress = carried?.progress ?? newProgress(inputBuildId(input), Date.now());
  setHandler(progressQuery, () => progress);
  const config = await buildConfigInput(input);
  progress.buildId = config.buildId;
  const retryQueue = carried?.retryQueue ?? [];
  setHandler(
    retryFailedShardsUpdate,
    () => {
      const retrying = progress.failedShards.map((f) => f.shard).sort((a, b) => a - b);
      retryQueue.push(...retrying);
      progress.failedShards = [];
      progress.shards.failed = 0;
      restartRate(progress, Date.now());
      return { retrying };
    },
    {
      // Once finalizing, no shard runs again: answering "retrying" would be a lie. A rejected update
      // leaves no trace in the history; the caller restarts the closed build instead (mmif resume).
      validator: () => {
        if (!RETRYABLE_PHASES.includes(progress.phase)) throw new Error(`build ${config.buildId} is ${progress.phase}: no shard can be retried in this run`);
      },
    },
  );
  // A build started under another id (the Temporal CLI) is one status and resume never find: refused
  // before it plans or pays for anything. Once per build (a continued run keeps its id). Patched:
  // builds started before the check replay without it.
  if (!carried && patched('workflow-id-is-build-id')) {
    const refusal = workflowIdRefusal(workflowInfo().workflowId, config.buildId);
    if (refusal) throw ApplicationFailure.nonRetryable(refusal, 'ConfigError');
  }
  const { planBuild, planTopUp, finalizeBuild, committedShards, preflightEndpoints } = proxyActivities<typeof activities>(pipelineActivityOptions(config.retry));
  const setPhase = (phase: BuildPhase) => {
    progress.phase = phase;
    if (config.searchAttributes) upsertSearchAttributes([{ key: MMIF_STATUS, value: phase }]);
  };
  if (config.searchAttributes && !carried) {
    upsertSearchAttributes([
      { key: MMIF_BUILD_ID, value: config.buildId },
      { key: MMIF_SOURCE, value: [...new Set(config.sources.map((s) => s.type))] },
    ]);
  }

  let plan: BuildPlan | undefined = carried?.plan;
  let build: BuildRef | undefined;
  try {
    // Before planning, once per build (not again after continue-as-new). Patched: builds started
    // before pre-flight existed replay without it.
    if (!carried && config.llm.preflight && patched('preflight-endpoints')) await preflightEndpoints(config);
    plan ??= await planBuild(config);
    build = { buildId: config.buildId, output: config.output, s3: config.s3, configFingerprint: plan.configFingerprint };
    progress.shards.planned = plan.shardCount;
    progress.samples.planned = plan.sampleCount;
    progress.requestsPerSecondLimit = requestsPerSecondLimit(config);
    setPhase('running');

    // A re-run finds its committed shards in a few activity calls, not one child workflow each. The
    // ones to re-open (model-call rejections to regenerate, an interrupted re-commit) are not among
    // them: their children run. No patch marker: this follows from the activity's recorded result.
    let pending = carried?.pending;
    const keptAtStart: RoundsState['kept'] = [];
    if (!pending) {
      const committed = new Set<number>();
      for (let from = 0; from < plan.shardCount; from += COMMIT_CHECK_CHUNK) {
        const to = Math.min(from + COMMIT_CHECK_CHUNK, plan.shardCount);
        const found = await committedShards({ build, from, to, rerunModelCallRejects: rerunModelCallRejects(config) });
        found.shards.forEach((shard) => committed.add(shard));
        // Absent from results recorded before it existed; only overlapped rounds read it.
        if (found.kept) keptAtStart.push(...found.kept);
        if (found.shards.length > 0) recordCommittedShard(progress, found.total, Date.now(), found.shards.length, true);
      }
      pending = Array.from({ length: plan.shardCount }, (_, shard) => shard).filter((shard) => !committed.has(shard));
      // This run's rate starts with its shards: planning and the shards found done stay out of it.
      restartRate(progress, Date.now());
    }
    let nextPending = carried?.nextPending ?? 0;
    const inFlight = shardsInFlight(config);
    // Patched once per build: a continued run goes on the way its first run went.
    if (config.targets && (carried ? carried.rounds !== undefined : patched(OVERLAPPED_ROUNDS))) {
      const rounds: RoundsState = carried?.rounds ?? {
        kept: keptAtStart,
        finished: [],
        forecastAt: 0,
        ...(patched(FORECAST_FROM_FIRST_STARTED) ? { forecastRule: 'first-started' as const } : {}),
      };
      // A first run starts its shards with the sources side by side (a continued one carries that order).
      const order = carried ? pending : startOrder(plan, pending, rounds.forecastRule);
      plan = await overlappedRounds({ input, config, build, progress, retryQueue, setPhase, inFlight }, { plan, pending: order, nextPending, rounds });
    } else {
      let startedThisRun = 0;
      const rollOver = () => workflowInfo().continueAsNewSuggested || startedThisRun >= config.shardsPerRun;
      const work = () => retryQueue.length > 0 || nextPending < pending!.length;
      for (;;) {
        while (work() && !rollOver() && !progress.budgetExhausted) {
          await condition(() => progress.shards.running < inFlight);
          const shard = retryQueue.shift() ?? pending[nextPending++]!;
          startedThisRun += 1;
          void runShard(config, build, plan, shard, progress);
        }
        await condition(() => progress.shards.running === 0);
        // A spent budget stops the build: no shard starts, no retry is waited for (raise it and run again).
        if (progress.budgetExhausted) break;
        if (work()) {
          // More to do: a retry that arrived meanwhile, or the rest of the plan after a roll-over.
          if (rollOver()) await continueAsNew<typeof buildDataset>(input, { plan, pending, nextPending, retryQueue, progress });
          continue;
        }
        if (progress.shards.failed === 0 && config.targets) {
          // Targets: commit the round in rank order, then plan the next one from what was kept.
          await commitRoundInOrder(config, build, plan, progress, inFlight);
          const grown: BuildPlan = await planTopUp({ config: input, round: plan.rounds.length });
          if (grown.targetsOutcome) {
            plan = grown;
            break;
          }
          pending = Array.from({ length: grown.shardCount - plan.shardCount }, (_, i) => plan!.shardCount + i);
          nextPending = 0;
          plan = grown;
          progress.shards.planned = plan.shardCount;
          progress.samples.planned = plan.sampleCount;
          continue;
        }
        if (progress.shards.failed === 0 || config.retryWindowSeconds === 0) break;
        setPhase('waiting-for-retry');
        if (!(await condition(() => retryQueue.length > 0, config.retryWindowSeconds * 1000))) break;
        setPhase('running');
      }
    }
  } catch (err) {
    if (!isCancellation(err) || !plan || !build) throw err;
    // Cancelled: committed shards are valid as they are; record where the build stopped.
    await CancellationScope.nonCancellable(() => finalizeBuild({ build: build!, shardCount: plan!.shardCount, failed: progress.failedShards }));
    setPhase('cancelled');
    throw err;
  }

  setPhase('finalizing');
  const report = await finalizeBuild({ build, shardCount: plan.shardCount, failed: progress.failedShards });
  if (progress.budgetExhausted) {
    setPhase('failed');
    throw ApplicationFailure.nonRetryable(progress.budgetExhausted, 'BudgetExhausted', report);
  }
  if (report.failedShards.length > 0) {
    setPhase('failed');
    const list = report.failedShards.map((f) => `shard ${f.shard}: ${f.error}`).join('; ');
    throw ApplicationFailure.nonRetryable(
      `${report.failedShards.length} of ${plan.shardCount} shards failed (report: ${report.datasetRoot}/build-report.json): ${list}`,
      'ShardsFailed',
      report,
    );
  }
  setPhase('done');
  return report;
}

/**
 * Commits the last round's shards so that each keeps only what its source still owes, counted in
 * plan order (= rank order): the records kept are the lowest-ranked accepted ones whatever order the
 * shards finished in. A shard whose source would still owe at least its size if every earlier shard
 * of the round kept all its samples cannot be trimmed: those commit in parallel, with that bound as
 * their caps. The others commit one by one, capped by what the earlier ones actually kept. Every cap
 * is a function of the plan and of committed counts, so a resumed build commits the same bytes.
 */
async function commitRoundInOrder(config: BuildConfig, build: BuildRef, plan: BuildPlan, progress: BuildProgress, inFlight: number): Promise<void> {
  const { commitShard, committedShard, committedShards, targetTallies } = proxyActivities<typeof activities>(pipelineActivityOptions(config.retry));
  const roundStart = plan.rounds[plan.rounds.length - 1]!;
  const committed = new Set((await committedShards({ build, from: roundStart, to: plan.shardCount })).shards);
  // What earlier rounds kept; this round's shards are added below, in plan order.
  const kept = await targetTallies({ build, plan, to: roundStart });
  const goals = sourceGoals(config);
  const commit = async (shard: number, caps: Goals) => {
    if (committed.has(shard)) return (await committedShard({ build, shard }))!;
    const summary = await commitShard({ build, shard, caps });
    recordCommittedShard(progress, summary, Date.now());
    return summary;
  };

  const round = Array.from({ length: plan.shardCount - roundStart }, (_, i) => roundStart + i);
  const bound = kept.map((t) => ({ instruct: t.instruct, dpo: t.dpo }));
  const unbound: Array<{ shard: number; caps: Goals }> = [];
  const rest: number[] = [];
  for (const shard of round) {
    const source = plan.shardSources[shard]!;
    const caps = commitCaps(goals[source]!, bound[source]!);
    const fits = Object.values(caps).every((cap) => cap >= plan.shardSizes[shard]!);
    if (fits && !rest.some((s) => plan.shardSources[s] === source)) {
      unbound.push({ shard, caps });
      bound[source]!.instruct += plan.shardSizes[shard]!;
      bound[source]!.dpo += plan.shardSizes[shard]!;
    } else rest.push(shard);
  }
  const summaries = await mapLimit(unbound, inFlight, ({ shard, caps }) => commit(shard, caps));
  for (const [i, { shard }] of unbound.entries()) {
    const tally = kept[plan.shardSources[shard]!]!;
    tally.instruct += summaries[i]!.instruct;
    tally.dpo += summaries[i]!.dpo;
  }
  for (const shard of rest) {
    const tally = kept[plan.shardSources[shard]!]!;
    const summary = await commit(shard, commitCaps(goals[plan.shardSources[shard]!]!, tally));
    tally.instruct += summary.instruct;
    tally.dpo += summary.dpo;
  }
}

/** What the overlapped rounds share with the build that runs them. */
interface RoundsContext {
  input: unknown;
  config: BuildConfig;
  build: BuildRef;
  progress: BuildProgress;
  retryQueue: number[];
  setPhase: (phase: BuildPhase) => void;
  /** Shards run at once (shardsInFlight). */
  inFlight: number;
}

/**
 * A targets build's rounds, overlapped. Each shard commits as soon as rank order allows
 * (domain/commitOrder.ts), not in a stop at the end of its round. A round's shards start with its
 * sources side by side; once the first half of each source's shards in the last round (and
 * everything before them) is committed, the next round is planned from a forecast of what the rest
 * will keep (pipeline/planning/topUp.ts), so its shards start in the free slots of this round's tail instead
 * of after it. Once every shard is committed, the exact tallies decide:
 * the targets are met (or cannot be), or one more round is planned. The records kept stay the
 * lowest-ranked accepted ones: the forecast only decides how many ranks are planned, and a shard's
 * caps are a function of the plan and committed counts. Returns the plan as it ends.
 */
async function overlappedRounds(ctx: RoundsContext, start: { plan: BuildPlan; pending: number[]; nextPending: number; rounds: RoundsState }): Promise<BuildPlan> {
  const { input, config, build, progress, retryQueue } = ctx;
  const { commitShard, committedShards, planTopUp } = proxyActivities<typeof activities>(pipelineActivityOptions(config.retry));
  const goals = sourceGoals(config);
  let { plan, nextPending } = start;
  const pending = start.pending;
  const kept = new Map<number, Kept>(start.rounds.kept.map(([shard, instruct, dpo]) => [shard, { instruct, dpo }]));
  let finished = [...start.rounds.finished];
  let forecastAt = start.rounds.forecastAt;
  const forecastRule = start.rounds.forecastRule;
  let committing = 0;
  let planning = false;
  let planningFailed: unknown;
  let startedThisRun = 0;

  const grow = (grown: BuildPlan) => {
    pending.push(
      ...startOrder(
        grown,
        Array.from({ length: grown.shardCount - plan.shardCount }, (_, i) => plan.shardCount + i),
        forecastRule,
      ),
    );
    plan = grown;
    progress.shards.planned = plan.shardCount;
    progress.samples.planned = plan.sampleCount;
  };
  // Commits every finished shard whose turn has come; each commit ending may let later ones go.
  const commitDue = () => {
    for (const shard of [...finished].sort((a, b) => a - b)) {
      const caps = capsWhenDue(plan, goals, shard, kept);
      if (!caps) continue;
      finished = finished.filter((s) => s !== shard);
      committing += 1;
      void commitShard({ build, shard, caps })
        .then(
          (summary) => {
            kept.set(shard, { instruct: summary.instruct, dpo: summary.dpo });
            recordCommittedShard(progress, summary, Date.now());
          },
          (err) => shardFailed(progress, shard, err),
        )
        .finally(() => {
          committing -= 1;
          commitDue();
        });
    }
  };
  const ran = (shard: number, summary: ShardSummary | null) => {
    // A shard committed before (its commit answered late, then retried) reports its summary.
    if (summary) kept.set(shard, { instruct: summary.instruct, dpo: summary.dpo });
    else finished.push(shard);
    commitDue();
  };
  let basis: { shards: number; of: number[] | undefined } | undefined;
  const forecastDue = () => {
    if (!config.targets!.overlapRounds || planning || forecastAt >= plan.rounds.length) return false;
    if (basis?.shards !== plan.shardCount) basis = { shards: plan.shardCount, of: forecastBasis(plan, forecastRule) };
    return basis.of !== undefined && basis.of.every((shard) => kept.has(shard));
  };
  const forecastNext = async () => {
    planning = true;
    forecastAt = plan.rounds.length;
    try {
      grow(await planTopUp({ config: input, round: plan.rounds.length, forecast: true, ...(forecastRule ? { basis: forecastRule } : {}) }));
    } catch (err) {
      planningFailed = err;
    } finally {
      planning = false;
    }
  };

  const work = () => retryQueue.length > 0 || nextPending < pending.length;
  const rollOver = () => workflowInfo().continueAsNewSuggested || startedThisRun >= config.shardsPerRun;
  const canStart = () => work() && !rollOver() && !progress.budgetExhausted && progress.shards.running < ctx.inFlight;
  const settled = () => progress.shards.running === 0 && committing === 0 && !planning;
  commitDue(); // shards that ran in an earlier run of this build
  for (;;) {
    await condition(() => planningFailed !== undefined || forecastDue() || canStart() || settled());
    if (planningFailed !== undefined) throw planningFailed;
    if (forecastDue()) void forecastNext();
    if (canStart()) {
      const shard = retryQueue.shift() ?? pending[nextPending++]!;
      startedThisRun += 1;
      void runShard(config, build, plan, shard, progress, ran);
      continue;
    }
    if (!settled()) continue;
    // Nothing runs, commits or is being planned, and nothing more can start in this run.
    if (progress.budgetExhausted) return plan;
    if (work()) {
      const rounds: RoundsState = { kept: [...kept].map(([shard, k]) => [shard, k.instruct, k.dpo]), finished, forecastAt, ...(forecastRule ? { forecastRule } : {}) };
      await continueAsNew<typeof buildDataset>(input, { plan, pending, nextPending, retryQueue, progress, rounds });
    }
    if (progress.shards.failed === 0) {
      // Every planned shard is committed: the exact tallies decide.
      const grown: BuildPlan = await planTopUp({ config: input, round: plan.rounds.length });
      if (grown.targetsOutcome) return grown;
      // The exact call may have committed shards again (a late duplicate dropped, the samples its
      // source's later shards trimmed restored): the next round's caps count what they keep now.
      for (let from = 0; from < plan.shardCount; from += COMMIT_CHECK_CHUNK) {
        const found = await committedShards({ build, from, to: Math.min(from + COMMIT_CHECK_CHUNK, plan.shardCount) });
        for (const [shard, instruct, dpo] of found.kept) kept.set(shard, { instruct, dpo });
      }
      grow(grown);
      continue;
    }
    if (config.retryWindowSeconds === 0) return plan;
    ctx.setPhase('waiting-for-retry');
    if (!(await condition(() => retryQueue.length > 0, config.retryWindowSeconds * 1000))) return plan;
    ctx.setPhase('running');
  }
}

/**
 * Versioning marker: a build whose config leaves `maxParallelShards` unset runs as many shards as keep
 * every sample lane of its endpoints fed (domain/sampleLanes.ts), so a lane whose sample ended always
 * finds another waiting (the slices share the worker's lanes: activities/runtime.ts lanesForBuild).
 * Builds started before always had it set (4 by default), as their recorded configs show.
 */
const SHARDS_FEED_LANES = 'shards-feed-sample-lanes';

/**
 * Shards run at once: `maxParallelShards` when set, else as many as the endpoints' slots need
 * dispatched; MIN_SHARDS_IN_FLIGHT with the Batch API (its shards go stage by stage, without lanes).
 */
function shardsInFlight(config: BuildConfig): number {
  if (config.maxParallelShards !== undefined) return config.maxParallelShards;
  if (batchStages(config).length > 0 || !patched(SHARDS_FEED_LANES)) return MIN_SHARDS_IN_FLIGHT;
  return shardsToFeedLanes(endpointSlots(config), { shardSize: config.shardSize, sliceSize: config.sliceSize, parallelSlices: PARALLEL_SLICES_PER_SHARD });
}

/**
 * Whether a re-run regenerates the model-call rejections of committed shards. Not with targets: each
 * shard's cap was computed from what the shards before it kept, so re-opening one would move the
 * counts the targets were met with (the top-up rounds already made up for those rejections).
 */
function rerunModelCallRejects(config: BuildConfig): boolean {
  return config.llm.rerunModelCallRejects && config.targets === undefined;
}

async function runShard(
  config: BuildConfig,
  build: BuildRef,
  plan: BuildPlan,
  shard: number,
  progress: BuildProgress,
  /** Told when the shard has run (overlapped rounds commit it then): its summary if it was committed already. */
  ran?: (shard: number, summary: ShardSummary | null) => void,
): Promise<void> {
  progress.shards.running += 1;
  const workflowId = shardWorkflowId(config.buildId, shard);
  (progress.runningShards ??= []).push(workflowId);
  try {
    const summary = await executeChild(buildShard, {
      workflowId,
      args: [
        {
          build,
          shard,
          sampleCount: plan.shardSizes[shard]!,
          sliceSize: config.sliceSize,
          parallelSlices: PARALLEL_SLICES_PER_SHARD,
          retry: config.retry,
          batchStages: batchStages(config),
          batchApi: config.batchApi,
          stageTaskQueues: stageTaskQueues(config),
          // With targets, the build commits shards itself, in rank order (commitRoundInOrder).
          deferCommit: config.targets !== undefined,
          rerunModelCallRejects: rerunModelCallRejects(config),
          // Only multiturn builds name their stages: single-turn inputs stay as recorded histories have them.
          ...(config.mode === 'multiturn' ? { stages: [...stagesFor('multiturn')] } : {}),
        },
      ],
    });
    if (summary) recordCommittedShard(progress, summary, Date.now());
    ran?.(shard, summary);
  } catch (err) {
    shardFailed(progress, shard, err);
  } finally {
    progress.shards.running -= 1;
    progress.runningShards = progress.runningShards!.filter((id) => id !== workflowId);
  }
}

/** A shard's child or its commit failed: listed for the report and a retry (a cancelled build is not a shard failure). */
function shardFailed(progress: BuildProgress, shard: number, err: unknown): void {
  if (isCancellation(err)) return;
  progress.shards.failed += 1;
  progress.failedShards.push({ shard, error: describeFailure(err) });
  // Patched: builds whose histories predate the budget replay without stopping on it.
  if (failureType(err) === 'BudgetExhausted' && patched(BUDGET_STOPS_BUILD)) progress.budgetExhausted = describeFailure(err);
}

const SHARD_IDS_FROM_WORKFLOW_ID = 'shard-ids-from-workflow-id';

/**
 * Shard children are named after this build's own workflow id, so concurrent runs of one buildId
 * (backfilled dates `<buildId>@<date>`, a manual run beside a scheduled one) never collide. A manual
 * build's workflow id is its buildId, so its shard ids are unchanged. The patch keeps builds started
 * before this change (children `<buildId>/shard-<n>`) replaying the ids they already started.
 */
function shardWorkflowId(buildId: string, shard: number): string {
  const parent = patched(SHARD_IDS_FROM_WORKFLOW_ID) ? workflowInfo().workflowId : buildId;
  return `${parent}/shard-${shard}`;
}

const BUDGET_STOPS_BUILD = 'budget-stops-build';

/** The type of the innermost application failure (an activity's error class name). */
function failureType(err: unknown): string | undefined {
  let type: string | undefined;
  for (let e = err as { type?: string; cause?: unknown } | undefined; e; e = e.cause as typeof e) if (typeof e.type === 'string') type = e.type;
  return type;
}

/** The innermost cause: "child failed: activity failed: <what actually went wrong>" helps nobody. */
function describeFailure(err: unknown): string {
  let e = err as { message?: string; cause?: unknown } | undefined;
  while (e?.cause) e = e.cause as typeof e;
  return e?.message ?? String(err);
}
