/** What a shard manifest (output/contracts/manifest.ts) is computed with: usage of calls, reject counts by reason, pair and verification stats, and whether a re-run re-opens the shard. */
import { addCounts } from '../../domain/counts.js';
import { reasonCode } from '../../config/rejectionReasons.js';
import type { CallRecord } from '../../llm/callRecord.js';
import type { AssembledSample, DpoRecord, RejectRecord } from '../contracts/records.js';
import type { PairStats, ShardManifest, StageUsage, StrategyPairs, Tally, UnpricedUsage, VerificationStats } from '../contracts/manifest.js';
import type { Verdict } from '../../domain/verdict.js';

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
  estimatedRequests: 0,
});

/** Adds `from` into `into`, field by field. */
export function addUsage(into: StageUsage, from: StageUsage): void {
  for (const key of Object.keys(into) as Array<keyof StageUsage>) into[key] += from[key];
}

/** The call fields usage is made of. */
export type UsageOfCall = Pick<
  CallRecord,
  'promptTokens' | 'completionTokens' | 'cachedPromptTokens' | 'reasoningTokens' | 'cached' | 'batch' | 'costUsd' | 'savedUsd' | 'costSource' | 'estimated'
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
    estimatedRequests: paid && c.estimated !== undefined ? 1 : 0,
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

/** Whether a re-run of the build must re-open this committed shard (see ShardManifest.modelCallRejects, revising). */
export function reopensOnRerun(manifest: Pick<ShardManifest, 'modelCallRejects' | 'revising'>, rerunModelCallRejects: boolean): boolean {
  return manifest.revising !== undefined || (rerunModelCallRejects && manifest.modelCallRejects > 0);
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
