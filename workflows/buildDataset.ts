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
  log,
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
import { workflowIdRefusal } from '../domain/buildWorkflowId.js';
import { causeChain } from '../domain/causeChain.js';
import { capsWhenDue, type Kept } from '../domain/commitOrder.js';
import { expandPlan, shapeOf, type ExpandedPlan, type PlanShape } from '../domain/planShape.js';
import { MIN_SHARDS_IN_FLIGHT, shardsToFeedLanes } from '../domain/sampleLanes.js';
import { stagesFor } from '../config/stages.js';
import { forecastBasis, sourceGoals, startOrder } from '../domain/targets.js';
import { archiveActivityOptions, pipelineActivityOptions } from './activityOptions.js';
import { newProgress, recordCommittedShard, restartRate, type BuildPhase, type BuildProgress } from './buildProgress.js';
import { addTallies } from '../domain/tallies.js';
import { buildShard } from './buildShard.js';
import { buildConfigInput } from './configInput.js';
import { MMIF_BUILD_ID, MMIF_SOURCE, MMIF_STATUS } from './searchAttributes.js';

/** Slices of one shard in flight at once: enough to overlap model latency, few enough to keep order. */
const PARALLEL_SLICES_PER_SHARD = 4;

/** Shards whose manifests one activity call checks when a build (re)starts. */
const COMMIT_CHECK_CHUNK = 1000;

/**
 * What a run hands to the next one when it continues as new, with the resolved config as the next
 * run's input: keys and small JSON only. The plan goes by reference (domain/planShape.ts), and what
 * was committed is read again from the manifests, so nothing here grows with the shard count but
 * the shards failed or waiting.
 */
export interface CarriedProgress {
  plan: PlanShape;
  /** How far the build's shard order (shardOrder) has been started. */
  cursor: number;
  retryQueue: number[];
  progress: BuildProgress;
  /** A targets build's shards that have run and wait to commit behind an earlier shard of their source (domain/commitOrder.ts). */
  finished?: number[];
  /** A targets build: how many rounds its plan had when the next one was last planned from a forecast (0: never). */
  forecastAt?: number;
}

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

/**
 * `input`: the config as given (resolved by an activity), or in a continued run (`carried`) the
 * config its first run resolved, used as it is: a continued run never resolves it again with the code
 * deployed since.
 */
export async function buildDataset(input: unknown, carried?: CarriedProgress): Promise<BuildReport> {
  // The query answers from the first activation: the config is resolved by an activity, and
  // `mmif status` (or `build --wait`) may ask while it runs.
  const progress = carried?.progress ?? newProgress(inputBuildId(input), Date.now());
  setHandler(progressQuery, () => progress);
  const config = carried ? (input as BuildConfig) : await buildConfigInput(input);
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
  // before it plans or pays for anything. Once per build (a continued run keeps its id).
  if (!carried) {
    const refusal = workflowIdRefusal(workflowInfo().workflowId, config.buildId);
    if (refusal) throw ApplicationFailure.nonRetryable(refusal, 'ConfigError');
  }
  const { planBuild, planTopUp, finalizeBuild, committedShards, preflightEndpoints } = proxyActivities<typeof activities>(pipelineActivityOptions(config.retry));
  const { extractArchives } = proxyActivities<typeof activities>(archiveActivityOptions(config.retry));
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

  let plan: ExpandedPlan | undefined;
  let build: BuildRef | undefined;
  try {
    // Before planning, once per build (not again after continue-as-new).
    if (!carried && config.llm.preflight) await preflightEndpoints(config);
    if (!carried) {
      // A root whose extraction cache cannot be written fails the build in its one line (ADR 0079).
      const unextracted = await extractArchives(config);
      if (unextracted.length > 0) throw ApplicationFailure.nonRetryable(unextracted.map((u) => u.problem).join('; '), 'SourceError');
    }
    plan = expandPlan(carried?.plan ?? (await planBuild(config)));
    build = { buildId: config.buildId, output: config.output, s3: config.s3, configFingerprint: plan.configFingerprint };
    progress.shards.planned = plan.shardCount;
    progress.samples.planned = plan.sampleCount;
    progress.requestsPerSecondLimit = requestsPerSecondLimit(config);
    setPhase('running');

    // Every run finds the committed shards in a few activity calls, not one child workflow each. The
    // ones to re-open (model-call rejections to regenerate, an interrupted re-commit) are not among
    // them: their children run.
    const committed = new Set<number>();
    const keptAtStart: Array<[shard: number, instruct: number, dpo: number]> = [];
    for (let from = 0; from < plan.shardCount; from += COMMIT_CHECK_CHUNK) {
      const to = Math.min(from + COMMIT_CHECK_CHUNK, plan.shardCount);
      const found = await committedShards({ build, from, to, rerunModelCallRejects: rerunModelCallRejects(config) });
      found.shards.forEach((shard) => committed.add(shard));
      keptAtStart.push(...found.kept);
      if (!carried && found.shards.length > 0) recordCommittedShard(progress, found.total, found.shards.length);
    }
    // This run's rate starts with its shards: planning and the shards found done stay out of it.
    if (!carried) restartRate(progress, Date.now());
    const queue: ShardQueue = { order: shardOrder(config, plan), cursor: carried?.cursor ?? 0, skip: committed };
    const inFlight = shardsInFlight(config);
    if (config.targets) {
      plan = await targetRounds(
        { config, build, progress, retryQueue, setPhase, inFlight },
        { plan, queue, kept: keptAtStart, finished: carried?.finished ?? [], forecastAt: carried?.forecastAt ?? 0 },
      );
    } else {
      let startedThisRun = 0;
      const rollOver = () => workflowInfo().continueAsNewSuggested || startedThisRun >= config.shardsPerRun;
      const work = () => retryQueue.length > 0 || hasNext(queue);
      for (;;) {
        while (work() && !rollOver() && !progress.budgetExhausted) {
          await condition(() => progress.shards.running < inFlight);
          const shard = retryQueue.shift() ?? takeNext(queue);
          startedThisRun += 1;
          void runShard(config, build, plan, shard, progress);
        }
        await condition(() => progress.shards.running === 0);
        // A spent budget stops the build: no shard starts, no retry is waited for (raise it and run again).
        if (progress.budgetExhausted) break;
        if (work()) {
          // More to do: a retry that arrived meanwhile, or the rest of the plan after a roll-over.
          if (rollOver()) await continueAsNew<typeof buildDataset>(config, { plan: shapeOf(plan), cursor: queue.cursor, retryQueue, progress });
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
    await CancellationScope.nonCancellable(() => finalizeBuild({ build: build!, shardCount: plan!.shardCount, failed: progress.failedShards, replicas: progress.replicas }));
    setPhase('cancelled');
    throw err;
  }

  setPhase('finalizing');
  const shardCount = plan.shardCount;
  const report = await finalizeBuild({
    build,
    shardCount,
    failed: progress.failedShards,
    replicas: progress.replicas,
    ...(progress.budgetExhausted ? { budgetExhausted: progress.budgetExhausted } : {}),
  }).catch((err: unknown) => {
    throw withFailedShards(err, progress.failedShards, shardCount);
  });
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

/** What a targets build's rounds share with the build that runs them. */
interface RoundsContext {
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
 * (domain/commitOrder.ts), not in a stop at the end of its round. Once every shard of the last round
 * but its last wave (the shards that run at once) is committed, the next round is planned from a
 * forecast of what the wave will keep (domain/targets.ts forecastBasis, pipeline/planning/topUp.ts),
 * so its shards take the slots the wave leaves as it drains. Once every shard is committed, the
 * exact tallies decide: the targets are met (or cannot be), or one more round is planned from them.
 * The records kept are the lowest-ranked accepted ones: the forecast only decides how many ranks are
 * planned, and a shard's caps are a function of the plan and committed counts. Returns the plan as
 * it ends.
 */
async function targetRounds(
  ctx: RoundsContext,
  start: { plan: ExpandedPlan; queue: ShardQueue; kept: Array<[shard: number, instruct: number, dpo: number]>; finished: number[]; forecastAt: number },
): Promise<ExpandedPlan> {
  const { config, build, progress, retryQueue } = ctx;
  const { commitShard, committedShards, planTopUp } = proxyActivities<typeof activities>(pipelineActivityOptions(config.retry));
  const goals = sourceGoals(config);
  const { queue } = start;
  let { plan } = start;
  const kept = new Map<number, Kept>(start.kept.map(([shard, instruct, dpo]) => [shard, { instruct, dpo }]));
  let finished = [...start.finished];
  let { forecastAt } = start;
  let committing = 0;
  let planning = false;
  let startedThisRun = 0;

  const grow = (shape: PlanShape) => {
    const grown = expandPlan(shape);
    queue.order.push(
      ...startOrder(
        grown,
        Array.from({ length: grown.shardCount - plan.shardCount }, (_, i) => plan.shardCount + i),
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
            recordCommittedShard(progress, summary);
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

  // Checked on every activation: the basis is recomputed only when the plan grows, and `committed`
  // counts its shards found committed so far (commits never go away), so each check resumes there.
  let basis: { shards: number; of: number[] | undefined; committed: number } | undefined;
  const forecastDue = () => {
    if (planning || forecastAt >= plan.rounds.length || progress.budgetExhausted) return false;
    if (basis?.shards !== plan.shardCount) basis = { shards: plan.shardCount, of: forecastBasis(plan, ctx.inFlight), committed: 0 };
    if (!basis.of) return false;
    while (basis.committed < basis.of.length && kept.has(basis.of[basis.committed]!)) basis.committed += 1;
    return basis.committed === basis.of.length;
  };
  // A forecast only starts the next round early: one that fails (after its retries) is logged and
  // left to the exact call once every shard is committed, which fails the build if the cause stays.
  const forecastNext = async () => {
    planning = true;
    forecastAt = plan.rounds.length;
    try {
      grow(await planTopUp({ config, round: plan.rounds.length, forecast: { lastWave: ctx.inFlight } }));
    } catch (err) {
      // Cancelled with the build: the build's own flow handles that.
      if (!isCancellation(err))
        log.warn(`build ${config.buildId}: round ${forecastAt} was not planned from a forecast; it is planned once every shard is committed`, { error: String(err) });
    } finally {
      planning = false;
    }
  };

  const work = () => retryQueue.length > 0 || hasNext(queue);
  const rollOver = () => workflowInfo().continueAsNewSuggested || startedThisRun >= config.shardsPerRun;
  const canStart = () => work() && !rollOver() && !progress.budgetExhausted && progress.shards.running < ctx.inFlight;
  const settled = () => progress.shards.running === 0 && committing === 0 && !planning;
  commitDue(); // shards that ran in an earlier run of this build
  for (;;) {
    await condition(() => forecastDue() || canStart() || settled());
    if (forecastDue()) void forecastNext();
    if (canStart()) {
      const shard = retryQueue.shift() ?? takeNext(queue);
      startedThisRun += 1;
      void runShard(config, build, plan, shard, progress, ran);
      continue;
    }
    if (!settled()) continue;
    // Nothing runs, commits or is being planned, and nothing more can start in this run.
    if (progress.budgetExhausted) return plan;
    if (work()) await continueAsNew<typeof buildDataset>(config, { plan: shapeOf(plan), cursor: queue.cursor, retryQueue, progress, finished, forecastAt });
    if (progress.shards.failed === 0) {
      // Every planned shard is committed: the exact tallies decide.
      const grown = await planTopUp({ config, round: plan.rounds.length });
      if (grown.targetsOutcome) return expandPlan(grown);
      // The call may have committed shards again (a late duplicate dropped, the samples its source's
      // later shards trimmed restored): the next round's caps count what they keep now.
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
 * The shards a run starts, in order: `order` from `cursor` on, without those committed when the run
 * began (`skip`). In memory only: a continued run rebuilds it from the plan and the manifests, and
 * is handed the cursor.
 */
interface ShardQueue {
  order: number[];
  cursor: number;
  skip: ReadonlySet<number>;
}

/** The build's shards in the order they start: plan order, or a targets build's rounds with their sources side by side (startOrder). */
function shardOrder(config: BuildConfig, plan: ExpandedPlan): number[] {
  const all = Array.from({ length: plan.shardCount }, (_, shard) => shard);
  return config.targets ? startOrder(plan, all) : all;
}

/** Whether a shard is left to start (moving the cursor past committed ones). */
function hasNext(queue: ShardQueue): boolean {
  while (queue.cursor < queue.order.length && queue.skip.has(queue.order[queue.cursor]!)) queue.cursor += 1;
  return queue.cursor < queue.order.length;
}

/** The next shard to start; only when hasNext. */
function takeNext(queue: ShardQueue): number {
  if (!hasNext(queue)) throw new Error('no shard left to start');
  return queue.order[queue.cursor++]!;
}

/**
 * Shards run at once: `maxParallelShards` when set, else as many as keep every sample lane of the
 * endpoints fed (domain/sampleLanes.ts: a lane whose sample ended always finds another waiting);
 * MIN_SHARDS_IN_FLIGHT with the Batch API (its shards go stage by stage, without lanes).
 */
function shardsInFlight(config: BuildConfig): number {
  if (config.maxParallelShards !== undefined) return config.maxParallelShards;
  if (batchStages(config).length > 0) return MIN_SHARDS_IN_FLIGHT;
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
  plan: ExpandedPlan,
  shard: number,
  progress: BuildProgress,
  /** Told when the shard has run (a targets build commits it then): its summary if it was committed already. */
  ran?: (shard: number, summary: ShardSummary | null) => void,
): Promise<void> {
  progress.shards.running += 1;
  const workflowId = shardWorkflowId(shard);
  progress.runningShards.push(workflowId);
  try {
    const outcome = await executeChild(buildShard, {
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
          // With targets, the build commits shards itself, in rank order (domain/commitOrder.ts).
          deferCommit: config.targets !== undefined,
          rerunModelCallRejects: rerunModelCallRejects(config),
          stages: [...stagesFor(config.mode)],
        },
      ],
    });
    if ('deferred' in outcome) {
      // The build commits it later (targets): its run's tallies count now, its commit's summary then.
      addTallies(progress, outcome);
      ran?.(shard, null);
    } else {
      recordCommittedShard(progress, outcome);
      ran?.(shard, outcome);
    }
  } catch (err) {
    shardFailed(progress, shard, err);
  } finally {
    progress.shards.running -= 1;
    progress.runningShards = progress.runningShards.filter((id) => id !== workflowId);
  }
}

/** A shard's child or its commit failed: listed for the report and a retry (a cancelled build is not a shard failure). */
function shardFailed(progress: BuildProgress, shard: number, err: unknown): void {
  if (isCancellation(err)) return;
  progress.shards.failed += 1;
  progress.failedShards.push({ shard, error: describeFailure(err) });
  if (failureType(err) === 'BudgetExhausted') progress.budgetExhausted = describeFailure(err);
}

/**
 * Shard children are named after this build's own workflow id, so concurrent runs of one buildId
 * (backfilled dates `<buildId>@<date>`, a manual run beside a scheduled one) never collide. A manual
 * build's workflow id is its buildId.
 */
const shardWorkflowId = (shard: number): string => `${workflowInfo().workflowId}/shard-${shard}`;

/** The type of the innermost application failure (an activity's error class name). */
function failureType(err: unknown): string | undefined {
  const types = causeChain(err).flatMap((e) => (typeof e.type === 'string' ? [e.type] : []));
  return types.at(-1);
}

/**
 * The build's finalizing failing after shards failed (an object store or a disk gone for good fails
 * both): its one line names the shards it hit too, with their causes, not only the key finalizing
 * could not read or write. The innermost application failure's type is kept (the CLI's exit code).
 */
function withFailedShards(err: unknown, failed: BuildProgress['failedShards'], shardCount: number): unknown {
  if (failed.length === 0) return err;
  const inner = causeChain(err)
    .filter((e) => e instanceof ApplicationFailure)
    .at(-1);
  const shards = failed.map((f) => `shard ${f.shard}: ${f.error}`).join('; ');
  return ApplicationFailure.create({
    message: `finalizing: ${inner?.message ?? describeFailure(err)}; ${failed.length} of ${shardCount} shards had failed before: ${shards}`,
    type: inner?.type ?? undefined,
    nonRetryable: true,
  });
}

/** The innermost cause: "child failed: activity failed: <what actually went wrong>" helps nobody. */
function describeFailure(err: unknown): string {
  return causeChain(err).at(-1)?.message ?? String(err);
}
