/**
 * The build report: totals over every committed shard's manifest, the shards that failed and why,
 * and LLaMA-Factory's dataset_info.json beside the data. Written when a build run finishes.
 */
import { getJson, putIfChanged, type ObjectStore } from '../../storage/objectStore.js';
import type { BuildLayout } from '../../storage/buildLayout.js';
import { addCounts } from '../../domain/counts.js';
import { replicaShares, type ReplicaTally } from '../../domain/replicaShares.js';
import { addUnpriced, addUsage, emptyStrategyPairs, emptyUsage, summarizeUsage, unpricedUsage } from '../commit/manifest.js';
import type { StrategyPairs, ShardManifest, Tally, UnpricedUsage } from '../contracts/manifest.js';
import { costSummary } from './costSummary.js';
import type { BuildReport, TargetsReport } from '../contracts/buildReport.js';
import { PRICE_TABLE } from '../../llm/pricing.js';
import { SpendLedger, type Spend } from '../../llm/spendLedger.js';
import { preflightUsage } from './preflightUsage.js';
import type { EndpointLessons } from '../../llm/preflight.js';
import { chatDatasetInfo, llamaFactoryDatasetInfo } from '../formats/sharegpt.js';
import { sourceGoals } from '../../domain/targets.js';
import type { BuildPlan, FreeSlots, StoredConfig } from '../../pipeline/planning/planBuild.types.js';
import type { BuildConfig } from '../../config/buildConfig.js';
import { readManifests, talliesFrom } from './sourceTallies.js';
import { richnessReport } from './richnessReport.js';
import { sourceAccounting } from './sourceAccounting.js';

/** What every paid request of the build came to, all runs and workers, committed or not (the spend ledger). */
export async function paidSpend(store: ObjectStore, layout: BuildLayout): Promise<Spend> {
  const ledger = new SpendLedger(store, layout.spendPrefix);
  await ledger.refresh(0);
  return ledger.total();
}

export async function writeBuildReport(
  store: ObjectStore,
  layout: BuildLayout,
  input: {
    build: { buildId: string; configFingerprint: string };
    shardCount: number;
    failed: Array<{ shard: number; error: string }>;
    budgetExhausted?: string;
    /** Where the build's requests went among replicas (the build workflow's count, domain/replicaShares.ts). */
    replicas?: ReplicaTally;
  },
  endpointDialects: EndpointLessons[] = [],
): Promise<BuildReport> {
  const report: BuildReport = {
    buildId: input.build.buildId,
    configFingerprint: input.build.configFingerprint,
    datasetRoot: datasetRootOf(store, layout),
    simulated: false,
    shards: { planned: input.shardCount, committed: 0, failed: input.failed.length },
    failedShards: input.failed,
    ...(input.budgetExhausted ? { budgetExhausted: input.budgetExhausted } : {}),
    counts: { planned: 0, instruct: 0, dpo: 0, rejectedSamples: 0, rejectedPairs: 0 },
    rejectsByStage: {},
    modelCallRejects: 0,
    usage: {},
    cost: costSummary({}, undefined, { instruct: 0, dpo: 0 }, false),
    prices: { table: PRICE_TABLE.package, version: PRICE_TABLE.version, published: PRICE_TABLE.published, configured: [] },
    models: {},
    verification: { byMethod: {}, regeneratedAnswers: 0 },
    pairs: { byStrategy: {}, byConstraintType: {} },
    accounting: [],
  };
  const unpriced: UnpricedUsage = {};
  const heldOut = { instruct: 0, dpo: 0 };
  const manifests = await readManifests(store, layout, input.shardCount);
  for (const manifest of manifests) {
    if (!manifest) continue;
    report.shards.committed += 1;
    report.simulated ||= manifest.simulated;
    for (const key of Object.keys(report.counts) as Array<keyof BuildReport['counts']>) report.counts[key] += manifest.counts[key];
    for (const [stage, n] of Object.entries(manifest.rejectsByStage)) report.rejectsByStage[stage] = (report.rejectsByStage[stage] ?? 0) + n;
    report.modelCallRejects += manifest.modelCallRejects;
    for (const [stage, u] of Object.entries(manifest.usage)) addUsage((report.usage[stage] ??= emptyUsage()), u);
    addUnpriced(unpriced, manifest.unpriced);
    Object.assign(report.models, manifest.models);
    report.verification.regeneratedAnswers += manifest.verification.regeneratedAnswers;
    for (const [method, m] of Object.entries(manifest.verification.byMethod)) {
      const total = (report.verification.byMethod[method] ??= { passed: 0, total: 0 });
      total.passed += m.passed;
      total.total += m.total;
    }
    addStrategyPairs(report.pairs.byStrategy, manifest.pairs.byStrategy);
    addTallies(report.pairs.byConstraintType, manifest.pairs.byConstraintType);
    if (manifest.heldOut) {
      heldOut.instruct += manifest.heldOut.instruct;
      heldOut.dpo += manifest.heldOut.dpo;
    }
  }
  const config = (await getJson<StoredConfig>(store, layout.config))?.config;
  if (config?.holdout) report.heldOut = { fraction: config.holdout.fraction, seed: config.seed, ...heldOut };
  const plan = await getJson<BuildPlan>(store, layout.planSummary);
  // The plan summary is written before any shard runs; a report without one has no shard either.
  if (plan) report.accounting = sourceAccounting(plan, manifests);
  if (plan?.freeSlots) report.freeSlots = freeSlotsReport(plan, plan.freeSlots);
  const targets = targetsReport(config, plan, manifests);
  if (targets) report.targets = targets;
  const preflight = await preflightUsage(store, layout);
  if (preflight) report.usage.preflight = preflight;
  const richness = await richnessReport(store, layout);
  if (richness) {
    report.richness = richness.sources;
    // Planning's scoring calls (vlm-tags) are paid by the build too.
    for (const [stage, u] of Object.entries(summarizeUsage(richness.calls))) addUsage((report.usage[stage] ??= emptyUsage()), u);
    addUnpriced(unpriced, unpricedUsage(richness.calls));
  }
  if (Object.keys(unpriced).length) report.unpriced = unpriced;
  report.cost = { ...costSummary(report.usage, unpriced, report.counts, report.simulated), paid: await paidSpend(store, layout) };
  report.prices.configured = Object.keys(config?.llm.prices ?? {}).sort();
  if (endpointDialects.length > 0) report.endpointDialects = endpointDialects;
  const replicas = replicaShares(input.replicas ?? {});
  if (replicas.length > 0) report.replicas = replicas;
  // A multiturn build's data is chats and turn-level pairs (output/formats/chatFormats.ts), in folders of their own.
  if (config?.mode === 'multiturn') report.mode = 'multiturn';
  const datasetInfo = config?.mode === 'multiturn' ? chatDatasetInfo() : llamaFactoryDatasetInfo();
  await putIfChanged(store, layout.datasetInfo, JSON.stringify(datasetInfo), 'application/json');
  await putIfChanged(store, layout.report, JSON.stringify({ ...report, datasetRoot: '.' }), 'application/json');
  return report;
}

/** The dataset's location: `<output>/<buildId>`. */
export function datasetRootOf(store: ObjectStore, layout: BuildLayout): string {
  return `${store.root.replace(/\/+$/, '')}/${layout.root}`;
}

function freeSlotsReport(plan: BuildPlan, slots: FreeSlots): NonNullable<BuildReport['freeSlots']> {
  return {
    ...slots,
    short: plan.sources.flatMap((s, source) => (s.selected < s.target ? [{ source, type: s.type, share: s.target, held: s.selected }] : [])),
    given: plan.sources.flatMap((s, source) => (s.extra ? [{ source, type: s.type, extra: s.extra }] : [])),
  };
}

function targetsReport(config: BuildConfig | undefined, plan: BuildPlan | undefined, manifests: ReadonlyArray<ShardManifest | undefined>): TargetsReport | undefined {
  if (!config?.targets || !plan) return undefined;
  const tallies = talliesFrom(plan, manifests);
  return {
    outcome: plan.targetsOutcome ?? 'in-progress',
    rounds: plan.rounds.length,
    sources: sourceGoals(config).map((goals, i) => ({
      type: plan.sources[i]!.type,
      name: plan.sources[i]!.name,
      goals,
      kept: { instruct: tallies[i]!.instruct, dpo: tallies[i]!.dpo },
      planned: tallies[i]!.planned,
      exhausted: tallies[i]!.exhausted,
    })),
  };
}

function addStrategyPairs(into: Record<string, StrategyPairs>, from: Record<string, StrategyPairs>): void {
  for (const [strategy, p] of Object.entries(from)) {
    const total = (into[strategy] ??= emptyStrategyPairs());
    total.kept += p.kept;
    total.discarded += p.discarded;
    addCounts(total.discardedByReason, p.discardedByReason);
    addCounts(total.refusedAnswersByRule, p.refusedAnswersByRule);
  }
}

function addTallies(into: Record<string, Tally>, from: Record<string, Tally>): void {
  for (const [key, t] of Object.entries(from)) {
    const total = (into[key] ??= { kept: 0, discarded: 0 });
    total.kept += t.kept;
    total.discarded += t.discarded;
  }
}
