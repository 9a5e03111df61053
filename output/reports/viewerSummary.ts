/**
 * The viewer's summary panel: what a user asks of a build before reading its samples, from the two
 * reports the build writes beside the data: build-report.json (counts, shards, cost) and quality.json
 * (pass rates by constraint type, rejections by stage and reason, records per source). Either may be
 * missing (a build finalized before them, a copy without them): the panel says which and shows the
 * rest. Pure: reports in, HTML out; the viewer shows it at the top of its page (output/viewer/viewerPage.ts).
 */
import type { BuildReport } from '../contracts/buildReport.js';
import { formatCost } from './costSummary.js';
import type { QualityReport } from './qualityReport.js';
import { esc, share } from '../viewer/html.js';

interface BuildReports {
  report?: BuildReport;
  quality?: QualityReport;
}

export function summaryPanel({ report, quality }: BuildReports): string {
  const missing = [report ? undefined : 'build-report.json', quality ? undefined : 'quality.json'].filter((m) => m !== undefined);
  const parts = [
    report ? countsPart(report) : '',
    report ? part('Cost', `<ul>${formatCost(report.cost, report.mode).map(item).join('')}</ul>`) : '',
    quality ? bySourcePart(quality, report?.mode) : '',
    quality ? passRatesPart(quality) : '',
    quality ? rejectionsPart(quality) : '',
    missing.length ? `<p class="missing">Not in the dataset folder: ${missing.map(esc).join(', ')}; its figures are not shown.</p>` : '',
  ];
  return `<details id="summary" open><summary>Summary</summary><div class="panels">${parts.filter(Boolean).join('\n')}</div></details>`;
}

function countsPart(report: BuildReport): string {
  const n = report.counts;
  const chats = report.mode === 'multiturn';
  const rows: Array<[string, string]> = [
    ['samples planned', String(n.planned)],
    [chats ? 'chats accepted' : 'SFT records accepted', share(n.instruct, n.planned)],
    ['samples rejected', share(n.rejectedSamples, n.planned)],
    [chats ? 'turn-level pairs kept' : 'DPO pairs kept', share(n.dpo, n.dpo + n.rejectedPairs)],
    [chats ? 'turn-level pairs discarded' : 'DPO pairs discarded', String(n.rejectedPairs)],
    ...(report.heldOut ? [['held out for evaluation', `${report.heldOut.instruct}`] as [string, string]] : []),
    ['shards committed', `${report.shards.committed} of ${report.shards.planned}${report.shards.failed ? `, ${report.shards.failed} failed` : ''}`],
  ];
  return part('Counts', table(['', 'count'], rows));
}

function bySourcePart(quality: QualityReport, mode: BuildReport['mode']): string {
  const chats = mode === 'multiturn';
  const rows = Object.entries(quality.composition.bySource)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([source, c]) => [source, String(c.instruct), String(c.dpo), String(c.rejectedSamples), String(c.rejectedPairs)]);
  const head = ['source', chats ? 'chats' : 'SFT records', chats ? 'turn-level pairs' : 'DPO pairs', 'rejected samples', 'discarded pairs'];
  return part('By source', table(head, rows));
}

function passRatesPart(quality: QualityReport): string {
  const rows = Object.entries(quality.passRates)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([type, r]) => [type, r.category, share(r.firstAnswer.passed, r.firstAnswer.total), share(r.finalAnswer.passed, r.finalAnswer.total)]);
  return part('Pass rates by constraint type', table(['constraint type', 'category', 'first answer', 'final answer'], rows, 'pass-rates'));
}

function rejectionsPart(quality: QualityReport): string {
  const sorted = (counts: Record<string, number>) => Object.entries(counts).sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1));
  const byReason = sorted(quality.rejections.byReason).map(([reason, n]) => [reason, String(n)]);
  const byStage = sorted(quality.rejections.byStage).map(([stage, n]) => [stage, String(n)]);
  if (byReason.length + byStage.length === 0) return part('Rejections', '<p>none</p>');
  return part('Rejections', `${table(['reason', 'samples and pairs'], byReason, 'reasons')}${table(['stage', 'samples and pairs'], byStage)}`);
}

const part = (title: string, body: string) => `<section><h3>${esc(title)}</h3>${body}</section>`;
const item = (text: string) => `<li>${esc(text)}</li>`;

function table(head: readonly string[], rows: ReadonlyArray<readonly string[]>, id?: string): string {
  const cells = (row: readonly string[], tag: 'td' | 'th') => row.map((c) => `<${tag}>${esc(c)}</${tag}>`).join('');
  return `<table class="summary"${id ? ` id="${id}"` : ''}><thead><tr>${cells(head, 'th')}</tr></thead><tbody>${rows.map((r) => `<tr>${cells(r, 'td')}</tr>`).join('')}</tbody></table>`;
}
