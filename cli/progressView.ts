/** One screen of build progress, for `mmif status` and `mmif build --wait`. */
import type { BuildProgress } from '../workflows/buildProgress.js';
import { requestRate, type ShardProgress } from '../workflows/shardProgress.js';
import { costSummary, formatCost } from '../output/reports/costSummary.js';
import type { LiveProgress } from './liveProgress.js';
import type { Spend } from '../llm/spendLedger.js';
import { budgetNextStep, roleCost } from './wording.js';

const BAR_WIDTH = 30;

/** How the screen is shown: where the build runs, and what it paid so far when that could be read. */
export interface ProgressContext {
  /** A `mmif build --local` build: its next step after a budget stop is that command again. */
  local?: boolean;
  /** Every paid request of the build so far, committed or not (its spend ledger). */
  paid?: Spend;
}

/** `now`: the wall clock the running shards' request rates are read at. */
export function formatProgress(p: BuildProgress | LiveProgress, now = Date.now(), context: ProgressContext = {}): string {
  const { planned, committed, failed, running } = p.shards;
  const filled = planned > 0 ? Math.round((committed / planned) * BAR_WIDTH) : 0;
  const bar = `[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}]`;
  const eta = p.throughput.etaSeconds === null ? '' : ` | ETA ${formatDuration(p.throughput.etaSeconds)}`;
  const lines = [
    `${p.buildId} ${p.phase}${p.simulated ? ' (SIMULATED)' : ''}`,
    `${bar} ${committed}/${planned} shards, ${running} running, ${failed} failed`,
    `samples: ${p.samples.instruct} accepted, ${p.samples.dpo} DPO pairs, ${p.samples.rejectedSamples} rejected of ${p.samples.planned} | ` +
      `${p.throughput.samplesPerMinute.toFixed(1)} samples/min${eta}`,
  ];
  if ('shardsLive' in p && p.shardsLive.length > 0) lines.push(...liveLines(p.shardsLive, p.requestsPerSecondLimit, now, p.lastFailure));
  const reasons = Object.entries(p.rejections.byReason).sort((a, b) => b[1] - a[1]);
  if (reasons.length) lines.push(`rejections: ${reasons.map(([reason, n]) => `${reason} ${n}`).join(', ')}`);
  for (const [stage, u] of Object.entries(p.usage)) {
    lines.push(
      `  ${stage.padEnd(14)} ${u.requests} requests (${u.cachedRequests} cached, ${u.batchRequests} batch), ${u.promptTokens} + ${u.completionTokens} tokens, ${roleCost(u)}`,
    );
  }
  if (Object.keys(p.usage).length || context.paid) {
    const cost = { ...costSummary(p.usage, p.unpriced, p.samples, p.simulated), ...(context.paid ? { paid: context.paid } : {}) };
    lines.push(...formatCost(cost).map((l) => `  ${l}`));
  }
  for (const f of p.failedShards) lines.push(`FAILED shard ${f.shard}: ${f.error}`);
  if (p.budgetExhausted) lines.push(`STOPPED: ${p.budgetExhausted} (${budgetNextStep(p.buildId, context.local ?? false)})`);
  return lines.join('\n');
}

/**
 * The running shards as their stages finish: samples through every stage and through each one,
 * the requests/s they send now (against the endpoints' limit when the config sets one), and the
 * failed attempts of their requests by kind, retried or not, with the cause of the latest attempt
 * Temporal is retrying.
 */
function liveLines(shards: readonly ShardProgress[], limit: number | undefined, now: number, lastFailure: string | undefined): string[] {
  const samples = shards.reduce((n, s) => n + s.samples, 0);
  const through: Record<string, number> = {};
  for (const s of shards) for (const stage of s.order) through[stage] = (through[stage] ?? 0) + (s.stages[stage] ?? 0);
  const last = shards[0]!.order.at(-1)!;
  const perSecond = shards.reduce((r, s) => r + requestRate(s, now), 0);
  const share = limit
    ? ` (${Math.round((100 * perSecond) / limit)}% of the endpoints' limit, ${limit.toFixed(1)}/s)`
    : " (the endpoints' limit is not configured: set requestsPerMinute to see the share in use)";
  const failed: Record<string, number> = {};
  for (const s of shards) for (const [kind, n] of Object.entries(s.failedAttempts)) failed[kind] = (failed[kind] ?? 0) + n!;
  const errors = Object.entries(failed).sort((a, b) => b[1] - a[1]);
  return [
    `running shards: ${through[last]} of ${samples} samples done (${Object.entries(through)
      .map(([stage, n]) => `${stage} ${n}`)
      .join(', ')})`,
    `requests: ${perSecond.toFixed(1)}/s${share} | failed attempts: ${errors.length ? errors.map(([kind, n]) => `${kind} ${n}`).join(', ') : 'none'}${lastFailure ? ` (last: ${lastFailure})` : ''}`,
  ];
}

function formatDuration(seconds: number): string {
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)}m`;
  return `${Math.floor(seconds / 3600)}h${String(Math.round((seconds % 3600) / 60)).padStart(2, '0')}m`;
}
