/** The one-screen summary printed after a build. */
import { replicaSharesLine } from '../domain/replicaShares.js';
import type { BuildReport } from '../output/contracts/buildReport.js';
import { buildLayout } from '../storage/buildLayout.js';
import { formatAccount } from '../output/reports/sourceAccounting.js';
import { formatCost, formatPricedBy } from '../output/reports/costSummary.js';
import { budgetNextStep, counted, roleCost, stageLabel } from './wording.js';
import { ALL_STAGE_NAMES } from '../config/stages.js';

const SHARDS_LISTED = 5;

/**
 * `s3Endpoint`: the config's `s3.endpoint` (an S3-compatible store): the export commands, which read
 * the build without its config, are printed with it as MMIF_S3_ENDPOINT, else they would ask AWS.
 * `local`: the build ran under `mmif build --local` (its next step after a budget stop is that command).
 */
export function formatSummary(report: BuildReport, options: { s3Endpoint?: string; local?: boolean } = {}): string {
  const layout = buildLayout(report.buildId);
  const rel = (key: string) => `${report.datasetRoot}/${layout.inDataset(key)}`;
  const multiturn = report.mode === 'multiturn';
  const kinds = multiturn ? ['chats', 'turn-level pairs'] : ['MM-IFInstruct', 'MM-IFDPO pairs'];
  const lines = [
    `build ${report.buildId}: ${report.shards.committed}/${report.shards.planned} shards committed, ${report.shards.failed} failed`,
    `samples: ${plannedSamples(report)} planned -> ${report.counts.instruct} ${kinds[0]}, ${report.counts.dpo} ${kinds[1]}, ` +
      `${counted(report.counts.rejectedSamples, 'rejected sample')}, ${counted(report.counts.rejectedPairs, 'rejected pair')}`,
  ];
  for (const r of report.richness ?? []) {
    const fates = Object.entries(r.fates)
      .map(([fate, n]) => `${fate} ${n}`)
      .join(', ');
    const s = r.scores.selected;
    lines.push(`richness (${r.name} #${r.source}, ${r.settings.scorer}): ${fates}` + (s ? `; selected scores ${s.min}..${s.max}, median ${s.p50}` : ''));
  }
  if (report.targets) {
    const kept = report.targets.sources.map((t) => `${t.type} instruct ${t.kept.instruct}/${t.goals.instruct ?? '-'}, dpo ${t.kept.dpo}/${t.goals.dpo ?? '-'}`).join('; ');
    lines.push(`targets: ${report.targets.outcome} after ${report.targets.rounds} round(s): ${kept}`);
  }
  const slots = freeSlotsLine(report);
  if (slots) lines.push(slots);
  lines.push(...accountingLines(report));
  // In the order the stages run: where the samples went, first to last.
  const stepIndex = (stage: string) => (ALL_STAGE_NAMES as readonly string[]).indexOf(stage);
  const rejects = Object.entries(report.rejectsByStage).sort(([a], [b]) => stepIndex(a) - stepIndex(b));
  if (rejects.length) lines.push(`rejected by stage: ${rejects.map(([stage, n]) => `${stageLabel(stage)} ${n}`).join(', ')}`);
  const rerun = rerunHint(report);
  if (rerun) lines.push(rerun);
  for (const f of report.failedShards) lines.push(`FAILED shard ${f.shard}: ${f.error}`);
  if (report.budgetExhausted) lines.push(stoppedLine(report, report.budgetExhausted, rel(layout.samplesPrefix), options.local ?? false));
  const usage = Object.entries(report.usage);
  if (usage.length) {
    lines.push('model calls (requests / cached / prompt tokens / completion tokens / cost):');
    for (const [stage, u] of usage) {
      lines.push(
        `  ${stage.padEnd(14)} ${report.models[stage] ?? '(every endpoint)'}  ${u.requests} / ${u.cachedRequests} / ${u.promptTokens} / ${u.completionTokens} / ${roleCost(u)}`,
      );
    }
    lines.push(...formatCost(report.cost, report.mode).map((l) => `  ${l}`));
    if (report.prices) lines.push(`  ${formatPricedBy(report.prices)}`);
  }
  if (report.replicas) lines.push(`replicas: ${replicaSharesLine(report.replicas)}`);
  lines.push(`dataset root: ${report.datasetRoot}`);
  // A screen, not a listing: a large build names its first shards and counts the rest; a failed shard has no files.
  const failed = new Set(report.failedShards.map((f) => f.shard));
  const withFiles = Array.from({ length: report.shards.planned }, (_, shard) => shard).filter((shard) => !failed.has(shard));
  for (const shard of withFiles.slice(0, SHARDS_LISTED)) {
    const files = multiturn ? [layout.chatParquet(shard), layout.chatDpoParquet(shard)] : [layout.instructParquet(shard), layout.dpoParquet(shard)];
    lines.push(`  shard ${shard}: ${files.map(rel).join(', ')} (+ sharegpt JSONL, manifest)`);
  }
  if (withFiles.length > SHARDS_LISTED) lines.push(`  ... and ${withFiles.length - SHARDS_LISTED} more shards (manifests/)`);
  lines.push(`LLaMA-Factory: dataset_dir=${report.datasetRoot} datasets ${multiturn ? 'mmif_chat, mmif_chat_dpo' : 'mmif_instruct, mmif_dpo'} (dataset_info.json)`);
  const output = report.datasetRoot.slice(0, -(report.buildId.length + 1));
  // One command a line, each pasteable as it stands (a `trl|mmifeval` would be a pipe to a shell).
  const env = options.s3Endpoint && output.startsWith('s3://') ? `MMIF_S3_ENDPOINT=${options.s3Endpoint} ` : '';
  const exportCommand = (format: string) => `${env}npm run mmif -- export --output ${output} --build-id ${report.buildId} --format ${format}`;
  lines.push(`TRL: ${exportCommand('trl')}`);
  const evalLine = mmifevalLine(report, exportCommand('mmifeval'));
  if (evalLine) lines.push(`MM-IFEval: ${evalLine}`);
  lines.push(`dataset card: ${rel(layout.datasetCard)}; quality report: ${rel(layout.quality)}; viewer: ${rel(layout.viewer)}`);
  if (report.simulated) {
    lines.push(
      '',
      'NOTE: every instruction, constraint and answer in this build came from the bundled SIMULATOR,',
      'not a real model. It is test data. Set OPENAI_BASE_URL (and OPENAI_API_KEY, MMIF_MODEL) for real data.',
    );
  }
  return lines.join('\n');
}

/**
 * A budget stop: what the uncommitted shards paid is not lost. Their samples' stage results stay in
 * the work area, and the next run of the build finds them there and calls no model for them
 * (pipeline/run/runStage.ts skips a stage whose result is stored); the next step fits how it ran.
 */
function stoppedLine(report: BuildReport, stopped: string, samples: string, local: boolean): string {
  const uncommitted = report.cost.paid ? Math.max(report.cost.paid.usd - report.cost.usd, 0) : undefined;
  const what = uncommitted === undefined ? '' : ` ($${uncommitted.toFixed(4)} of the spend)`;
  return (
    `STOPPED: ${stopped}. The stage results the uncommitted shards paid for${what} are kept in ${samples}: ` +
    `${budgetNextStep(report.buildId, local)}; it commits them without calling a model for them again`
  );
}

/**
 * The MM-IFEval command that works for this build: `export --format mmifeval` refuses a build that
 * reserved no eval split (without `--all`) and every multiturn build, whose held-out chats
 * `mmif eval --multiturn` reads instead (output/formats/export.ts).
 */
function mmifevalLine(report: BuildReport, exportCommand: string): string | undefined {
  if (report.mode === 'multiturn') return report.heldOut ? `npm run mmif -- eval --data ${report.datasetRoot} --multiturn --model <model>` : undefined;
  if (report.heldOut) return exportCommand;
  return `${exportCommand} --all  # every sample, to score the data itself: this build reserved no eval split ("holdout")`;
}

/**
 * The samples the build planned, from its accounting (every shard's, committed or not; `counts` adds
 * up committed shards only, and is 0 for a build whose shards all failed).
 */
function plannedSamples(report: BuildReport): number {
  return report.accounting.reduce((sum, a) => sum + a.planned, 0);
}

/**
 * Where maxSamples went when a source held fewer samples than its share: `maxSamples: allava #1 held
 * 9 of its 13; 4 free slots went to chartqa #0 (+4)`, and how many stay unused and why.
 */
function freeSlotsLine(report: BuildReport): string | undefined {
  const f = report.freeSlots;
  if (!f) return undefined;
  const short = f.short.map((s) => `${s.type} #${s.source} held ${s.held} of its ${s.share}`).join(', ');
  const given = f.given.map((g) => `${g.type} #${g.source} (+${g.extra})`).join(', ');
  const taken = f.freed - f.unused;
  const parts = [`maxSamples: ${short}`];
  if (taken > 0) parts.push(`${counted(taken, 'free slot')} went to ${given}`);
  if (f.unused > 0) parts.push(`${f.unused} of the ${counted(f.freed, 'free slot')} stay unused: no source without a quota or richness had records left`);
  return parts.join('; ');
}

/** Every source record accounted for (build-report.json `accounting`), a line per source. */
export function accountingLines(report: BuildReport): string[] {
  return report.accounting.map((a) => `accounting ${formatAccount(a)}`);
}

/** When model-call errors rejected samples a re-run can regenerate (never with targets): how to. */
export function rerunHint(report: BuildReport): string | undefined {
  if (!report.modelCallRejects || report.targets) return undefined;
  return (
    `${report.modelCallRejects} of the rejections were caused by model-call errors (modelCall in rejects/): ` +
    `\`mmif resume ${report.buildId}\` once the endpoint is fixed regenerates just those`
  );
}
