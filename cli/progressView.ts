/** One screen of build progress, for `mmif status` and `mmif build --wait`. */
import type { BuildProgress } from '../workflows/buildProgress.js';
import { costSummary, formatCost } from '../output/costSummary.js';

const BAR_WIDTH = 30;

export function formatProgress(p: BuildProgress): string {
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
  const reasons = Object.entries(p.rejections.byReason).sort((a, b) => b[1] - a[1]);
  if (reasons.length) lines.push(`rejections: ${reasons.map(([reason, n]) => `${reason} ${n}`).join(', ')}`);
  for (const [stage, u] of Object.entries(p.usage)) {
    const cost = u.unpricedRequests ? `unpriced (${u.unpricedRequests} requests)` : `$${u.costUsd.toFixed(4)}`;
    lines.push(`  ${stage.padEnd(14)} ${u.requests} requests (${u.cachedRequests} cached, ${u.batchRequests} batch), ${u.promptTokens} + ${u.completionTokens} tokens, ${cost}`);
  }
  if (Object.keys(p.usage).length) lines.push(...formatCost(costSummary(p.usage, p.unpriced, p.samples, p.simulated)).map((l) => `  ${l}`));
  for (const f of p.failedShards) lines.push(`FAILED shard ${f.shard}: ${f.error}`);
  if (p.budgetExhausted) lines.push(`STOPPED: ${p.budgetExhausted} (raise llm.budget and run the build again to continue it)`);
  return lines.join('\n');
}

function formatDuration(seconds: number): string {
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)}m`;
  return `${Math.floor(seconds / 3600)}h${String(Math.round((seconds % 3600) / 60)).padStart(2, '0')}m`;
}
