/** One screen of build progress, for `mmif status` and `mmif build --wait`. */
import type { BuildProgress } from '../workflows/buildProgress.js';
import { requestRate, type ShardProgress } from '../workflows/shardProgress.js';
import { costSummary, formatCost } from '../output/reports/costSummary.js';
import type { LiveProgress } from './liveProgress.js';
import type { Spend } from '../llm/spendLedger.js';
import { budgetNextStep, roleCost } from './wording.js';
import { replicaShares, replicaSharesLine } from '../domain/replicaShares.js';
import { addTallies, copyTallies, type Tallies } from '../domain/tallies.js';

const BAR_WIDTH = 30;

/** How the screen is shown: where the build runs, and what it paid so far when that could be read. */
interface ProgressContext {
  /** A `mmif build --local` build: its next step after a budget stop is that command again. */
  local?: boolean;
  /** Every paid request of the build so far, committed or not (its spend ledger). */
  paid?: Spend;
}

/**
 * `now`: the wall clock the screen is read at. The samples, the rate and the ETA count the running
 * shards' samples as their stages finish (their live counters), not only the committed shards', out
 * of the build's planned samples; the cost is what the build paid so far when `context.paid` has it.
 */
export function formatProgress(p: BuildProgress | LiveProgress, now = Date.now(), context: ProgressContext = {}): string {
  const { planned, committed, failed, running } = p.shards;
  const filled = planned > 0 ? Math.round((committed / planned) * BAR_WIDTH) : 0;
  const bar = `[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}]`;
  const { accepted, rejected } = samplesSoFar(p);
  const { samplesPerMinute, etaSeconds } = sampleRate(p, now);
  const eta = etaSeconds === undefined ? '' : ` | ETA ${formatDuration(etaSeconds)}`;
  const lines = [
    `${p.buildId} ${p.phase}${p.simulated ? ' (SIMULATED)' : ''}`,
    `${bar} ${committed}/${planned} shards, ${running} running, ${failed} failed`,
    `samples: ${accepted} accepted, ${rejected} rejected of ${p.samples.planned} planned, ${p.samples.dpo} DPO pairs committed | ` +
      `${samplesPerMinute.toFixed(1)} samples/min${eta}`,
  ];
  const tallies = buildTallies(p, 'shardsLive' in p ? p.shardsLive : []);
  if ('shardsLive' in p) lines.push(...liveLines(p, tallies));
  const replicas = replicasLine(tallies);
  if (replicas) lines.push(replicas);
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

/** Samples accepted and rejected so far: the committed shards' and, with live counters, the running shards' as their stages finish. */
function samplesSoFar(p: BuildProgress | LiveProgress): { accepted: number; rejected: number } {
  const live = 'shardsLive' in p ? p.shardsLive : [];
  return {
    accepted: p.samples.instruct + live.reduce((n, s) => n + s.accepted, 0),
    rejected: p.samples.rejectedSamples + live.reduce((n, s) => n + s.rejected, 0),
  };
}

/** A build's sample rate at `now` and the time its planned samples left take at it (absent while nothing was done). */
export interface SampleRate {
  samplesPerMinute: number;
  etaSeconds?: number;
}

/**
 * Samples done per minute since this run's shards started (BuildProgress.runStart: none was running
 * then, so every sample done since is this run's), and the time the planned ones left take at it.
 * What the screen shows and `mmif status --json` adds as `rate`.
 */
export function sampleRate(p: BuildProgress | LiveProgress, now: number): SampleRate {
  const { accepted, rejected } = samplesSoFar(p);
  const done = accepted + rejected;
  const [since, doneThen] = p.runStart;
  const minutes = (now - since) / 60_000;
  const samplesPerMinute = minutes > 0 ? Math.max(done - doneThen, 0) / minutes : 0;
  if (samplesPerMinute <= 0) return { samplesPerMinute: 0 };
  return { samplesPerMinute, etaSeconds: Math.round((Math.max(p.samples.planned - done, 0) / samplesPerMinute) * 60) };
}

/**
 * The running shards as their stages finish: their samples through each stage, the requests/s they
 * send now (against the endpoints' limit when the config sets one), and the failed attempts of the
 * build's requests by kind, retried or not (the committed shards' and the running ones', so the
 * count never goes down), with the cause of the latest attempt Temporal is retrying.
 */
function liveLines(p: LiveProgress, tallies: Tallies): string[] {
  const shards = p.shardsLive;
  const limit = p.requestsPerSecondLimit;
  const perSecond = p.requestsPerSecond;
  const share = limit
    ? ` (${Math.round((100 * perSecond) / limit)}% of the endpoints' limit, ${limit.toFixed(1)}/s)`
    : " (the endpoints' limit is not configured: set requestsPerMinute to see the share in use)";
  const errors = Object.entries(tallies.failedAttempts).sort((a, b) => b[1] - a[1]);
  const lines: string[] = [];
  if (shards.length > 0) {
    const through: Record<string, number> = {};
    for (const s of shards) for (const stage of s.order) through[stage] = (through[stage] ?? 0) + (s.stages[stage] ?? 0);
    lines.push(
      `running shards, samples through each stage: ${Object.entries(through)
        .map(([stage, n]) => `${stage} ${n}`)
        .join(', ')}`,
    );
  }
  lines.push(
    `requests: ${perSecond.toFixed(1)}/s${share} | failed attempts: ${errors.length ? errors.map(([kind, n]) => `${kind} ${n}`).join(', ') : 'none'}${p.lastFailure ? ` (last: ${p.lastFailure})` : ''}`,
  );
  return lines;
}

/** The replicas' shares of the build's requests (committed and running shards), for endpoints with several. */
function replicasLine(tallies: Tallies): string | undefined {
  const shares = replicaShares(tallies.replicas);
  return shares.length > 0 ? `replicas: ${replicaSharesLine(shares)}` : undefined;
}

/** The build's tallies: its committed shards' and its running shards' live ones. */
function buildTallies(p: BuildProgress, live: readonly ShardProgress[]): Tallies {
  const tallies = copyTallies(p);
  for (const s of live) addTallies(tallies, s);
  return tallies;
}

function formatDuration(seconds: number): string {
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)}m`;
  return `${Math.floor(seconds / 3600)}h${String(Math.round((seconds % 3600) / 60)).padStart(2, '0')}m`;
}
