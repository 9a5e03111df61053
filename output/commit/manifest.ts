/** The shard manifest: written last, it is the commit marker and the shard's table of contents. */
import { addCounts } from '../../domain/counts.js';
import { ALL_STAGE_NAMES } from '../../domain/stages.js';
import type { CallRecord } from '../../llm/modelCaller.js';
import type { AssembledSample, DpoRecord, RejectRecord } from './records.js';
import type { ShardQuality } from './qualityStats.js';
import type { Verdict } from '../../pipeline/stageState.js';

export const MANIFEST_FORMAT = 'mmif-engine/shard-manifest@1';

export interface StageUsage {
  requests: number;
  /** Requests answered from the cache (made and paid before). */
  cachedRequests: number;
  /** Requests whose reply came through the Batch API. */
  batchRequests: number;
  promptTokens: number;
  completionTokens: number;
  /** Of promptTokens, those the provider served from its prompt cache (billed at its cached-input price). */
  cachedPromptTokens: number;
  /** Of completionTokens, those spent reasoning (billed as output, never part of a reply). */
  reasoningTokens: number;
  /**
   * USD paid by this build (llm/pricing.ts: the provider's own figure, the config's price or the
   * price table; batch discount applied; cache hits are free). Unpriced requests add nothing here:
   * they are counted in `unpricedRequests` and by model in `unpriced`, never as $0.
   */
  costUsd: number;
  /** What the cache hits cost when they were first made: money not spent again. */
  savedUsd: number;
  /** Requests paid now whose cost is the provider's own figure (OpenRouter's usage.cost). */
  providerCostRequests: number;
  /** Requests paid now of a model no price is known for. */
  unpricedRequests: number;
}

export const emptyUsage = (): StageUsage => ({
  requests: 0,
  cachedRequests: 0,
  batchRequests: 0,
  promptTokens: 0,
  completionTokens: 0,
  cachedPromptTokens: 0,
  reasoningTokens: 0,
  costUsd: 0,
  savedUsd: 0,
  providerCostRequests: 0,
  unpricedRequests: 0,
});

export { addCounts };

/** Adds `from` into `into`, field by field (fields `from` lacks, as in manifests written before them, add 0). */
export function addUsage(into: StageUsage, from: Partial<StageUsage>): void {
  for (const key of Object.keys(into) as Array<keyof StageUsage>) into[key] += from[key] ?? 0;
}

/** The tokens of the requests of models no price is known for, by model (paid requests only). */
export type UnpricedUsage = Record<string, { requests: number; promptTokens: number; completionTokens: number }>;

/** The call fields usage is made of. */
export type UsageOfCall = Pick<
  CallRecord,
  'promptTokens' | 'completionTokens' | 'cachedPromptTokens' | 'reasoningTokens' | 'cached' | 'batch' | 'costUsd' | 'savedUsd' | 'costSource'
>;

/** One call as usage. */
export function callUsage(c: UsageOfCall): StageUsage {
  const paid = !c.cached;
  return {
    requests: 1,
    cachedRequests: c.cached ? 1 : 0,
    batchRequests: c.batch ? 1 : 0,
    promptTokens: c.promptTokens,
    completionTokens: c.completionTokens,
    cachedPromptTokens: c.cachedPromptTokens ?? 0,
    reasoningTokens: c.reasoningTokens ?? 0,
    // Stage states stored before costs were recorded have none: count them as unknown (0).
    costUsd: c.costUsd ?? 0,
    savedUsd: c.savedUsd ?? 0,
    providerCostRequests: paid && c.costSource === 'provider' ? 1 : 0,
    unpricedRequests: paid && c.costSource === 'unpriced' ? 1 : 0,
  };
}

/** Adds `from` into `into`, model by model. */
export function addUnpriced(into: UnpricedUsage, from: UnpricedUsage | undefined): void {
  for (const [model, u] of Object.entries(from ?? {})) {
    const total = (into[model] ??= { requests: 0, promptTokens: 0, completionTokens: 0 });
    total.requests += u.requests;
    total.promptTokens += u.promptTokens;
    total.completionTokens += u.completionTokens;
  }
}

/** The paid requests of unpriced models, by model; undefined when every model was priced. */
export function unpricedUsage(calls: readonly CallRecord[]): UnpricedUsage | undefined {
  let unpriced: UnpricedUsage | undefined;
  for (const c of calls) {
    if (c.cached || c.costSource !== 'unpriced') continue;
    addUnpriced((unpriced ??= {}), { [c.model]: { requests: 1, promptTokens: c.promptTokens, completionTokens: c.completionTokens } });
  }
  return unpriced;
}

export interface ManifestFile {
  /** Relative to the dataset root. */
  path: string;
  sha256: string;
  bytes: number;
  rows: number;
}

export interface ShardManifest {
  format: typeof MANIFEST_FORMAT;
  buildId: string;
  shard: number;
  configFingerprint: string;
  /** True when any model reply came from the mmif simulator: such data is for testing only. */
  simulated: boolean;
  counts: { planned: number; instruct: number; dpo: number; rejectedSamples: number; rejectedPairs: number };
  rejectsByStage: Record<string, number>;
  /** By reason code, e.g. "too-small", "below-threshold", "uninformative-pair". */
  rejectsByReason: Record<string, number>;
  /**
   * The rejected samples alone (no pairs) by reason code: with `counts.instruct`, every planned
   * sample once (the build report's accounting). Absent in manifests written before it existed.
   */
  rejectedSamplesByReason?: Record<string, number>;
  files: ManifestFile[];
  models: Record<string, string>;
  usage: Record<string, StageUsage>;
  /** Paid requests of models no price is known for, by model; absent when every model was priced. */
  unpriced?: UnpricedUsage;
  verification: VerificationStats;
  pairs: PairStats;
  /** Richness of the shard's planned images (sources[].richness), in plan order: for score distributions. */
  richness?: { scorer: string; scores: number[]; tags: number[] };
  /** The shard's share of the quality report (qualityStats.ts); absent in manifests written before it existed. */
  quality?: ShardQuality;
  /** With targets: the records of each kind this shard could keep; accepted ones beyond are `over-target` rejects. */
  targetCaps?: Partial<Record<'instruct' | 'dpo', number>>;
  /**
   * Rejections (samples and pairs) caused by a model call: `model_call` in their reject records. Not
   * final: a re-run of the build regenerates them (llm.rerunModelCallRejects). Absent in manifests
   * written before it existed (taken as 0).
   */
  modelCallRejects?: number;
  /** 1 for the first commit; each re-commit of a re-opened shard adds one. Absent before revisions existed (1). */
  revision?: number;
  /**
   * Set, to the revision being written, on the standing manifest before a re-commit rewrites the
   * data files: a crash mid-rewrite leaves this mark, and the next run re-opens the shard whatever
   * the config says, so the files and the manifest agree again.
   */
  revising?: number;
  /**
   * With the build's `holdout`: accepted records kept out of the training data because their image
   * is held out; the SFT ones are in `heldout/shard-N.jsonl` (listed in `files`). `counts` are the
   * training data only.
   */
  heldOut?: { instruct: number; dpo: number };
}

/** Whether a re-run of the build must re-open this committed shard (see ShardManifest.modelCallRejects, revising). */
export function reopensOnRerun(manifest: Pick<ShardManifest, 'modelCallRejects' | 'revising'>, rerunModelCallRejects: boolean): boolean {
  return manifest.revising !== undefined || (rerunModelCallRejects && (manifest.modelCallRejects ?? 0) > 0);
}

export interface Tally {
  kept: number;
  discarded: number;
}

/** Pair acceptance of one DPO strategy, and what each pair rule (pipeline/pairRules.ts) removed. */
export interface StrategyPairs extends Tally {
  /** Discarded pairs by reason code: a pair rule ("uninformative-pair", "chosen-loses") or a model-call failure. */
  discardedByReason: Record<string, number>;
  /** Rejected answers refused by each pair rule, in kept and discarded pairs (each refusal cost a regeneration). */
  refusedAnswersByRule: Record<string, number>;
}

/** DPO pair acceptance by strategy and by the constraint types at stake. */
export interface PairStats {
  byStrategy: Record<string, StrategyPairs>;
  /** Per constraint type, over the pairs where it was at stake (dropped, or all under no_image). */
  byConstraintType: Record<string, Tally>;
}

export interface VerificationStats {
  /** Verdicts on accepted answers, by method. */
  byMethod: Record<string, { passed: number; total: number }>;
  /** Accepted answers that needed a regeneration. */
  regeneratedAnswers: number;
}

export function summarizeUsage(calls: readonly CallRecord[]): Record<string, StageUsage> {
  const usage: Record<string, StageUsage> = {};
  for (const c of calls) addUsage((usage[c.stage] ??= emptyUsage()), callUsage(c));
  return usage;
}

export function modelsByStage(calls: readonly CallRecord[]): Record<string, string> {
  const models: Record<string, string> = {};
  for (const c of calls) models[c.stage] ??= c.model;
  return models;
}

export function countByStage(rejects: readonly RejectRecord[]): Record<string, number> {
  return countBy(rejects, (r) => r.stage);
}

/** Pipeline stages and model-call stages: a judge or verifier call's failure names its own stage. */
const REASON_STAGES: ReadonlySet<string> = new Set([...ALL_STAGE_NAMES, 'compatibility', 'verifier', 'judge']);

/** The stable code of a reason: "answer: below-threshold: pass rate ..." -> "below-threshold". */
export function reasonCode(reason: string): string {
  const [first, second] = reason.split(':').map((p) => p.trim());
  return (REASON_STAGES.has(first!) && second ? second : first!) || 'unknown';
}

export function countByReason(rejects: readonly RejectRecord[]): Record<string, number> {
  return countBy(rejects, (r) => reasonCode(r.reason));
}

function countBy<T>(items: readonly T[], key: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
}

export const emptyStrategyPairs = (): StrategyPairs => ({ kept: 0, discarded: 0, discardedByReason: {}, refusedAnswersByRule: {} });

export function pairStats(samples: readonly AssembledSample[]): PairStats {
  const stats: PairStats = { byStrategy: {}, byConstraintType: {} };
  const count = (tally: Tally, kept: boolean) => {
    if (kept) tally.kept += 1;
    else tally.discarded += 1;
  };
  for (const s of samples) {
    const pair = s.dpo
      ? { kept: true, strategy: s.dpo.strategy, types: atStakeTypes(s.dpo), refused: s.dpo.pair_rule_rejections }
      : s.reject?.kind === 'pair' && s.reject.strategy
        ? { kept: false, strategy: s.reject.strategy, types: discardedAtStakeTypes(s.reject), refused: s.reject.pair_rule_rejections ?? {} }
        : undefined;
    if (!pair) continue;
    const strategy = (stats.byStrategy[pair.strategy] ??= emptyStrategyPairs());
    count(strategy, pair.kept);
    if (!pair.kept) addCounts(strategy.discardedByReason, { [reasonCode(s.reject!.reason)]: 1 });
    addCounts(strategy.refusedAnswersByRule, pair.refused);
    for (const type of new Set(pair.types)) count((stats.byConstraintType[type] ??= { kept: 0, discarded: 0 }), pair.kept);
  }
  return stats;
}

function discardedAtStakeTypes(reject: RejectRecord): string[] {
  const stake = new Set(reject.at_stake ?? []);
  return (reject.verdicts ?? []).filter((v) => stake.has(v.index)).map((v) => v.type);
}

/** The types of a kept pair's constraints at stake: dropped ones (all of them under no_image). */
function atStakeTypes(pair: DpoRecord): string[] {
  if (pair.strategy === 'no_image') return pair.constraints.map((c) => c.type);
  return pair.dropped_constraints.map((c) => c.type);
}

/** Verdicts on kept answers (SFT records' answers, or chat turns' answers), by method, and the answers regenerated. */
export function verificationStats(answers: Iterable<{ attempts: number; verdicts: readonly Verdict[] }>): VerificationStats {
  const stats: VerificationStats = { byMethod: {}, regeneratedAnswers: 0 };
  for (const answer of answers) {
    if (answer.attempts > 1) stats.regeneratedAnswers += 1;
    for (const v of answer.verdicts) {
      const m = (stats.byMethod[v.method] ??= { passed: 0, total: 0 });
      m.total += 1;
      if (v.passed) m.passed += 1;
    }
  }
  return stats;
}
