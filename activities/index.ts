/**
 * The activities: thin adapters from Temporal to the pipeline modules. They add heartbeats and
 * return only small JSON; a permanent error (domain/errors.ts) fails one non-retryably
 * (worker/maskSecretsInterceptor.ts).
 */
import { Context } from '@temporalio/activity';
import { parseBuildConfig } from '../config/buildConfig.js';
import { buildLayout, type BuildLayout } from '../storage/buildLayout.js';
import { writeShard, type ShardToCommit } from '../output/commit/shardWriter.js';
import { shardsKeepingLostClaims } from '../output/commit/lateDuplicates.js';
import { recommitTrimmedShards } from '../output/commit/recommitTrimmed.js';
import type { StageContext } from '../pipeline/run/context.js';
import { writeBuildReport } from '../output/reports/buildReport.js';
import type { BuildReport } from '../output/contracts/buildReport.js';
import { writeDatasetDocs } from '../output/reports/datasetDocs.js';
import { writeReservedSplit } from '../output/formats/export.js';
import { makeBuildPlan } from '../pipeline/planning/planBuild.js';
import type { BuildPlan } from '../pipeline/planning/planBuild.types.js';
import { runSliceStages as runStages, runStage, type SliceLanes, type SliceOutcome, type SliceStagesOutcome } from '../pipeline/run/runStage.js';
import { buildProblems } from '../pipeline/planning/buildChecks.js';
import { extractEverySource, type Unextracted } from '../sources/sourceArchives.js';
import { makeTopUpPlan } from '../pipeline/planning/topUp.js';
import { talliesFrom } from '../output/reports/sourceTallies.js';
import { planShape, type PlanShape } from '../domain/planShape.js';
import { sourceGoals, type Goals, type SourceTally } from '../domain/targets.js';
import { evalSetIndex } from '../pipeline/decontamination.js';
import { writeBudget } from '../llm/buildBudget.js';
import { getJson, type ObjectStore } from '../storage/objectStore.js';
import { addCounts } from '../domain/counts.js';
import { addUnpriced, addUsage, emptyUsage, reopensOnRerun } from '../output/commit/manifest.js';
import type { ShardManifest } from '../output/contracts/manifest.js';
import { mapLimit } from '../domain/mapLimit.js';
import type { SliceTask, SliceStagesTask, BuildRef, ShardSummary, ShardTask, ShardTotals } from './buildRef.js';
import { budgetFor, cacheStoreFor, contextFor, contextForBuild, lanesForBuild, richnessTools, storeFor } from './runtime.js';
import { endpointLessons, preflight, type PreflightOutcome } from '../llm/preflight.js';
import { LLM_CACHE_PREFIX } from '../storage/buildLayout.js';
import { recordPreflightUsage } from '../output/reports/preflightUsage.js';
import { loadShardPlan, shardPlanIn } from './shardPlan.js';
import { probeOutput } from '../storage/outputProbe.js';
import { withHeartbeat } from './heartbeat.js';
import { stagesFor, type StageName } from '../config/stages.js';
import { sliceHeartbeat, throughStages, type SliceHeartbeat } from './sliceHeartbeat.js';
import { noProgressBoundMs, ProgressWatch } from './sliceWatchdog.js';
import { ArchiveWatch } from './archiveWatch.js';
import { withReplyProgress } from '../llm/replyProgress.js';
import type { ReplicaTally } from '../domain/replicaShares.js';
import { copyTallies } from '../domain/tallies.js';

export { awaitStageBatch, collectStageBatch, submitStageBatch } from './batchApi.js';
export { finalizeEvaluation, planEvaluation, runEvalSlice } from './evaluation.js';
export { resolveBuildConfig, resolveEvalConfig } from './resolveConfig.js';

function sumSummaries(summaries: ShardSummary[]): ShardTotals {
  const total: ShardTotals = {
    planned: 0,
    instruct: 0,
    dpo: 0,
    rejectedSamples: 0,
    rejectedPairs: 0,
    rejectsByStage: {},
    rejectsByReason: {},
    usage: {},
    simulated: false,
    modelCallRejects: 0,
  };
  for (const s of summaries) {
    for (const key of ['planned', 'instruct', 'dpo', 'rejectedSamples', 'rejectedPairs', 'modelCallRejects'] as const) total[key] += s[key];
    addCounts(total.rejectsByStage, s.rejectsByStage);
    addCounts(total.rejectsByReason, s.rejectsByReason);
    for (const [stage, u] of Object.entries(s.usage)) addUsage((total.usage[stage] ??= emptyUsage()), u);
    if (s.unpriced) addUnpriced((total.unpriced ??= {}), s.unpriced);
    total.simulated ||= s.simulated;
  }
  return total;
}

function summarize(manifest: ShardManifest): ShardSummary {
  return {
    shard: manifest.shard,
    ...manifest.counts,
    rejectsByStage: manifest.rejectsByStage,
    rejectsByReason: manifest.rejectsByReason,
    usage: manifest.usage,
    ...(manifest.unpriced ? { unpriced: manifest.unpriced } : {}),
    simulated: manifest.simulated,
    modelCallRejects: manifest.modelCallRejects,
    revision: manifest.revision,
    ...(manifest.revising !== undefined ? { revising: manifest.revising } : {}),
  };
}

/**
 * One tiny request per distinct endpoint and model (llm/preflight.ts), before planning: a refused
 * key, unknown model or text-only model fails the build in seconds, non-retryably.
 */
export async function preflightEndpoints(input: unknown): Promise<PreflightOutcome[]> {
  return withHeartbeat(async () => {
    const config = parseBuildConfig(input);
    // First: the pre-flight records its usage in the output.
    await probeOutput(storeFor(config.output, config.s3));
    // Its requests are paid, so the budget holds them too: written here, before planning writes it again
    // (unchanged). Without a budget, none is written where none was: a pre-flight that fails leaves no build folder.
    const store = storeFor(config.output, config.s3);
    const budgetKey = buildLayout(config.buildId).budget;
    if (config.llm.budget || (await getJson(store, budgetKey))) await writeBudget(store, budgetKey, config.llm.budget);
    const outcomes = await preflight(config, cacheStoreFor(config), LLM_CACHE_PREFIX, process.env, budgetFor(config));
    await recordPreflightUsage(storeFor(config.output, config.s3), buildLayout(config.buildId), outcomes, config.llm.prices);
    return outcomes;
  });
}

/**
 * Extracts every source's gzip'd tars (sources/sourceArchives.ts) before the checks and planning read
 * their roots, once per build, in an activity of its own: a Hub archive of tens of GB takes longer
 * than planning's limit. It heartbeats the compressed bytes read; an attempt that reads none for a
 * while fails retryably (activities/archiveWatch.ts), naming the source (ADR 0078). It returns the
 * sources whose cache cannot be written, each with its one line: the checks list them, the build
 * fails on them (ADR 0079); neither extracts again.
 */
export async function extractArchives(input: unknown): Promise<Unextracted[]> {
  const config = parseBuildConfig(input);
  const watch = new ArchiveWatch();
  return withHeartbeat(
    () => extractEverySource(config.sources, config.s3, watch),
    () => ({ archiveBytesRead: watch.bytes }),
    () => watch.stalled(),
  );
}

/** `mmif build`'s checks before it starts anything (pipeline/planning/buildChecks.ts), after extractArchives: the problems found, none when fine. */
export async function checkBuild(input: unknown, unextracted: Unextracted[]): Promise<string[]> {
  return withHeartbeat(() => buildProblems(parseBuildConfig(input), unextracted));
}

/** Plans the build (idempotently: a re-run reads the plan it wrote) and returns the plan by reference (domain/planShape.ts). */
export async function planBuild(input: unknown): Promise<PlanShape> {
  return withHeartbeat(async () => {
    const ctx = contextFor(parseBuildConfig(input));
    await probeOutput(ctx.store);
    // Each run holds the build to the budget of the config it was started with (not fingerprinted).
    await writeBudget(ctx.store, ctx.layout.budget, ctx.config.llm.budget);
    await evalSetIndex(ctx.config); // a missing or malformed evaluation set fails the build now
    return planShape(await makeBuildPlan(ctx.config, ctx.store, ctx.layout, ctx.sources, richnessTools(ctx)), ctx.layout.planSummary);
  });
}

/**
 * A stage over a slice of a shard. Its tallies (failed attempts, replicas) go out with each
 * heartbeat and carry over to the activity's next attempt: a slice failing on an endpoint that is
 * down shows them in `mmif status` (cli/liveProgress.ts) while Temporal retries it, and they stay
 * counted once it succeeds.
 */
export async function runStageSlice(task: SliceTask): Promise<SliceOutcome> {
  const carried = sliceHeartbeat(Context.current().info.heartbeatDetails);
  const tallies = copyTallies(carried);
  return withHeartbeat(
    async () => {
      const ctx = await contextForBuild(task.build);
      const samples = (await loadShardPlan(task)).slice(task.from, task.to);
      return runStage(ctx, task.stage, samples, tallies);
    },
    (): SliceHeartbeat => ({ ...tallies }),
  );
}

/**
 * A slice of a shard through all its stages, each sample on its own (pipeline/run/runStage.ts,
 * runSliceStages), each in one of the worker's sample lanes for the build (lanesForBuild), in line
 * by when the slice was first scheduled (a retried attempt keeps its place: the oldest shards go
 * first), then its shard and place in it. Its heartbeat carries, besides the tallies (carried
 * over as in runStageSlice), the samples through each stage, the requests sent so far and, while
 * samples wait for lanes, its place in line: `mmif status` adds the counts to the shard's counters
 * while the slice runs, since its outcome comes only at its end. It heartbeats at once when a sample
 * advances a stage, and its no-progress watchdog (sliceWatchdog.ts) fails an attempt that stands still.
 */
export async function runSliceStages(task: SliceStagesTask): Promise<SliceStagesOutcome> {
  const context = Context.current();
  const { heartbeatDetails, scheduledTimestampMs } = context.info;
  const carried = sliceHeartbeat(heartbeatDetails);
  const tallies = copyTallies(carried);
  const startedAt = Date.now();
  let order: readonly StageName[] = [];
  let sofar: SliceStagesOutcome | undefined;
  let lanes: SliceLanes | undefined;
  let watch: ProgressWatch | undefined;
  const line = () => (lanes ? lanes.pool.place(lanes.order) : undefined);
  const details = (): SliceHeartbeat => {
    const place = line();
    return { ...tallies, startedAt, ...(sofar ? throughStages(sofar, order) : {}), ...(place?.waiting ? { line: place } : {}) };
  };
  const stalled = () => {
    const place = line();
    if (place) watch?.inLine(place);
    return watch?.stalled();
  };
  return withHeartbeat(
    async () => {
      const ctx = await contextForBuild(task.build);
      order = stagesFor(ctx.config.mode);
      const samples = (await loadShardPlan(task)).slice(task.from, task.to);
      lanes = { pool: lanesForBuild(task.build, ctx.config), order: [scheduledTimestampMs, task.shard, task.from] };
      const progressed = new ProgressWatch(`${task.from}-${task.to - 1} of shard ${task.shard} (${task.stages.join(', ')})`, noProgressBoundMs(ctx.config.llm));
      watch = progressed;
      const advanced = (outcome: SliceStagesOutcome) => {
        sofar = outcome;
        progressed.advanced();
        context.heartbeat(details());
      };
      return withReplyProgress(
        () => progressed.advanced(),
        () => runStages(ctx, task.stages, samples, tallies, advanced, lanes),
      );
    },
    details,
    stalled,
  );
}

/**
 * Which shards of [from, to) are already committed, with their summaries added up: a resumed build
 * checks its plan in chunks and starts child workflows only for the rest. Committed shards that a
 * re-run must re-open (`reopensOnRerun`: model-call rejections when `rerunModelCallRejects`, an
 * interrupted re-commit always) are listed apart, in `reopened`, and left out of `shards` and `total`.
 */
export async function committedShards(input: {
  build: BuildRef;
  from: number;
  to: number;
  rerunModelCallRejects?: boolean;
}): Promise<{ shards: number[]; total: ShardTotals; reopened: number[]; kept: Array<[shard: number, instruct: number, dpo: number]> }> {
  // Up to 1,000 manifests a call (workflows/buildDataset.ts): on a slow store, longer than the heartbeat timeout.
  return withHeartbeat(async () => {
    const store = storeFor(input.build.output, input.build.s3);
    const layout = buildLayout(input.build.buildId);
    const range = Array.from({ length: input.to - input.from }, (_, i) => input.from + i);
    const manifests = await mapLimit(range, 32, (shard) => getJson<ShardManifest>(store, layout.manifest(shard)));
    const found = manifests.filter((m): m is ShardManifest => m !== undefined);
    const reopen = (m: ShardManifest) => reopensOnRerun(m, input.rerunModelCallRejects ?? false);
    const committed = found.filter((m) => !reopen(m));
    return {
      shards: committed.map((m) => m.shard),
      total: sumSummaries(committed.map(summarize)),
      reopened: found.filter(reopen).map((m) => m.shard),
      // What each kept, by shard: a targets build caps its later shards by it (domain/commitOrder.ts).
      kept: committed.map((m): [number, number, number] => [m.shard, m.counts.instruct, m.counts.dpo]),
    };
  });
}

/** The summary of a committed shard, or null: lets a re-run skip committed shards without any model call. */
export async function committedShard(task: ShardTask): Promise<ShardSummary | null> {
  const store = storeFor(task.build.output, task.build.s3);
  const manifest = await getJson<ShardManifest>(store, buildLayout(task.build.buildId).manifest(task.shard));
  return manifest ? summarize(manifest) : null;
}

/**
 * Commits a shard; with `caps` (targets), keeps at most that many accepted records of each kind;
 * with `replacesRevision`, commits a re-opened shard again as its next revision.
 */
export async function commitShard(task: ShardTask & { caps?: Goals; replacesRevision?: number }): Promise<ShardSummary> {
  return withHeartbeat(async () => {
    const ctx = await contextForBuild(task.build);
    const manifest = await writeShard(ctx.store, ctx.layout, {
      ...(await shardToCommit(ctx, task.shard, task.build.configFingerprint)),
      ...(task.caps ? { caps: task.caps } : {}),
      ...(task.replacesRevision !== undefined ? { replacesRevision: task.replacesRevision } : {}),
    });
    return summarize(manifest);
  });
}

/** What every commit of a shard of this build takes, beyond its caps and the revision it replaces. */
async function shardToCommit(ctx: StageContext, shard: number, configFingerprint: string): Promise<ShardToCommit> {
  return {
    buildId: ctx.config.buildId,
    shard,
    configFingerprint,
    samples: await shardPlanIn(ctx.store, ctx.layout, shard),
    training: { template: ctx.config.training.promptTemplate, seed: ctx.config.seed },
    errorBudget: ctx.config.llm.errorBudget,
    ...(ctx.config.mode === 'multiturn' ? { multiturn: true } : {}),
    ...(ctx.config.holdout ? { holdout: { seed: ctx.config.seed, fraction: ctx.config.holdout.fraction } } : {}),
  };
}

/**
 * Commits again, as its next revision, every committed shard that still keeps a sample whose image a
 * lower rank claimed after that shard committed (output/commit/lateDuplicates.ts): the commit rejects the
 * sample as a duplicate of the lower rank, so the sample kept is the lowest rank whatever order the
 * shards ran in. Runs before the build's records are counted: before the report, and with targets
 * before each top-up round (a dropped duplicate is then refilled like any rejection).
 */
async function dropLateDuplicates(store: ObjectStore, layout: BuildLayout, shardCount: number, context: () => Promise<StageContext>): Promise<void> {
  const late = await shardsKeepingLostClaims(store, layout, shardCount);
  if (late.length === 0) return;
  const ctx = await context();
  for (const { shard, manifest } of late) await commitAgain(ctx, shard, manifest, manifest.targetCaps);
}

/** Commits a committed shard again, as the revision after `manifest`'s, with `caps` (targets). */
async function commitAgain(ctx: StageContext, shard: number, manifest: ShardManifest, caps: Goals | undefined): Promise<ShardManifest> {
  return writeShard(ctx.store, ctx.layout, {
    ...(await shardToCommit(ctx, shard, manifest.configFingerprint)),
    ...(caps ? { caps } : {}),
    replacesRevision: manifest.revision,
  });
}

/** Plans topping-up round `round`, or records why topping up stops; returns the plan as it stands. */
export async function planTopUp(input: { config: unknown; round: number; forecast?: { lastWave: number } }): Promise<PlanShape> {
  return withHeartbeat(async () => {
    const ctx = contextFor(parseBuildConfig(input.config));
    const plan = await getJson<BuildPlan>(ctx.store, ctx.layout.planSummary);
    // Only before the round is planned from exact counts: a retry after it finds the round in the
    // plan and changes nothing; a forecast counts committed shards as they are.
    if (!input.forecast && plan && plan.rounds.length <= input.round && !plan.targetsOutcome) {
      await dropLateDuplicates(ctx.store, ctx.layout, plan.shardCount, async () => ctx);
      // Every time, not only after a drop here: a run killed between the two steps finds no drop left.
      await recommitTrimmedShards(ctx.store, ctx.layout, plan, sourceGoals(ctx.config), (shard, manifest, caps) => commitAgain(ctx, shard, manifest, caps));
    }
    const tallyOf = async (plan: BuildPlan, shards: readonly number[]) => {
      const manifests: Array<ShardManifest | undefined> = [];
      await mapLimit(shards, 32, async (shard) => (manifests[shard] = await getJson<ShardManifest>(ctx.store, ctx.layout.manifest(shard))));
      return talliesFrom(plan, manifests);
    };
    return planShape(await makeTopUpPlan(ctx.config, ctx.store, ctx.layout, ctx.sources, input.round, tallyOf, richnessTools(ctx), input.forecast), ctx.layout.planSummary);
  });
}

export async function finalizeBuild(input: {
  build: BuildRef;
  shardCount: number;
  failed: Array<{ shard: number; error: string }>;
  budgetExhausted?: string;
  replicas?: ReplicaTally;
}): Promise<BuildReport> {
  // Reads every manifest: a large build takes longer than the heartbeat timeout.
  return withHeartbeat(async () => {
    const store = storeFor(input.build.output, input.build.s3);
    const layout = buildLayout(input.build.buildId);
    await dropLateDuplicates(store, layout, input.shardCount, () => contextForBuild(input.build));
    const { config } = await contextForBuild(input.build);
    const report = await writeBuildReport(store, layout, input, await endpointLessons(config, cacheStoreFor(config), LLM_CACHE_PREFIX));
    await writeDatasetDocs(store, layout, report, input.shardCount);
    // The eval split the build reserved (config holdout), where `mmif eval --data` reads it.
    const split = report.heldOut;
    if (split && split.instruct > 0) await writeReservedSplit(store, layout, { multiturn: report.mode === 'multiturn', seed: split.seed, fraction: split.fraction });
    // Every shard has ended: a temp file still under the dataset root is one whose writer died
    // before its rename (a killed worker), and must not ship with the dataset (a Hub upload would).
    // Removed here; a removal that fails fails the activity, so none remains after a finalize.
    await store.sweepIncompleteWrites(`${layout.root}/`);
    return report;
  });
}
