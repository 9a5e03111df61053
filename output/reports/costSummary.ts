/**
 * What a build's model calls cost, in the few figures every report shows (the build report, the
 * dataset card, `mmif status`, the summary after a build): the USD of priced calls, per accepted
 * SFT record and per DPO pair, the share of prompt tokens the provider served from its prompt
 * cache, the reasoning tokens, and every model no price is known for, by name with its tokens.
 *
 * A simulated build spent nothing: its figure is what the same calls would cost at the named
 * models' prices, a forecast.
 */
import type { StageUsage, UnpricedUsage } from '../contracts/manifest.js';
import type { CostSummary, PricedBy } from '../contracts/buildReport.js';

export function costSummary(
  usage: Readonly<Record<string, StageUsage>>,
  unpriced: UnpricedUsage | undefined,
  accepted: { instruct: number; dpo: number },
  simulated: boolean,
): CostSummary {
  const total = (pick: (u: StageUsage) => number | undefined) => Object.values(usage).reduce((sum, u) => sum + (pick(u) ?? 0), 0);
  const usd = total((u) => u.costUsd);
  const promptTokens = total((u) => u.promptTokens);
  return {
    usd,
    forecast: simulated,
    ...(accepted.instruct > 0 ? { perSftRecord: usd / accepted.instruct } : {}),
    ...(accepted.dpo > 0 ? { perPair: usd / accepted.dpo } : {}),
    cachedPromptShare: promptTokens > 0 ? total((u) => u.cachedPromptTokens) / promptTokens : 0,
    reasoningTokens: total((u) => u.reasoningTokens),
    savedUsd: total((u) => u.savedUsd),
    providerCostRequests: total((u) => u.providerCostRequests),
    unpriced: unpriced ?? {},
  };
}

/**
 * The cost as a few lines of text (a multiturn build's accepted records are chats). With what every
 * paid request came to (`paid`, the spend ledger), that is the headline: a build stopped by its budget
 * or with shards still running spent more than its committed shards show, and the user must read that
 * figure first; the committed share and the per-record figures follow on the same line.
 */
export function formatCost(cost: CostSummary, mode?: 'multiturn'): string[] {
  const per = [
    cost.perSftRecord !== undefined ? `$${cost.perSftRecord.toFixed(5)} per ${mode === 'multiturn' ? 'chat' : 'SFT record'}` : undefined,
    cost.perPair !== undefined ? `$${cost.perPair.toFixed(5)} per pair` : undefined,
  ].filter((p) => p !== undefined);
  const unpriced = Object.keys(cost.unpriced).length > 0;
  const headline = cost.paid
    ? `${paidLine(cost.paid, cost.usd, cost.forecast)}${cost.forecast ? SIMULATED_NOTE : ''}${unpriced ? '; priced models only' : ''}`
    : cost.forecast
      ? `forecast $${cost.usd.toFixed(4)} at the named models' prices (simulated build: nothing was spent)`
      : `cost $${cost.usd.toFixed(4)}${unpriced ? ' for the priced models' : ''}`;
  const provider = cost.providerCostRequests > 0 ? `; ${cost.providerCostRequests} requests at the provider-reported cost` : '';
  const lines = [
    `${headline}${per.length ? ` (${per.join(', ')})` : ''}${provider}`,
    `cached prompt tokens ${(cost.cachedPromptShare * 100).toFixed(1)}%, reasoning tokens ${cost.reasoningTokens}, saved by the model cache $${cost.savedUsd.toFixed(4)}`,
  ];
  for (const [model, u] of Object.entries(cost.unpriced).sort(([a], [b]) => (a < b ? -1 : 1))) {
    lines.push(`UNPRICED model ${model}: ${u.requests} requests, ${u.promptTokens} prompt + ${u.completionTokens} completion tokens not in the cost (set llm.prices["${model}"])`);
  }
  return lines;
}

const SIMULATED_NOTE = "; at the named models' prices (simulated build: nothing was spent)";

/**
 * What every paid request of the build came to, committed or not, with the committed share beside
 * it: "paid $0.4300 for 181 requests (all runs, committed or not), $0.0000 of it in committed shards".
 */
function paidLine(paid: { usd: number; requests: number }, committedUsd: number, forecast: boolean): string {
  const what = forecast ? `all ${paid.requests} requests would cost $${paid.usd.toFixed(4)}` : `paid $${paid.usd.toFixed(4)} for ${paid.requests} requests`;
  return `${what} (all runs, committed or not), $${committedUsd.toFixed(4)} of it in committed shards`;
}

export function formatPricedBy(prices: PricedBy): string {
  const own = prices.configured.length ? `, and llm.prices for ${prices.configured.join(', ')}` : '';
  return `priced by ${prices.table} ${prices.version} (${prices.published})${own}`;
}
