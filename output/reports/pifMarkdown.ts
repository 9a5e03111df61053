/**
 * The multi-turn section of an evaluation report in Markdown: seed 002's figures as tables (PIF per turn
 * and per number of instructions with 95% intervals, corpus PIF, PIF-N-K for K = 1..N, and the append-all
 * ablation's difference in points). A simulated run says so in its first line, so its numbers are never
 * read as a model's.
 */
import type { MeanWithInterval, PifNk, PifReport } from '../../domain/multiturn/pif.js';

interface PifSection {
  model: string;
  simulated: boolean;
  report: PifReport;
  nk: readonly PifNk[];
  /** The same turns answered with every instruction appended at the end (seed 002 Table 3). */
  appendAll?: PifReport;
}

const fixed = (x: number) => x.toFixed(3);
const interval = (m: MeanWithInterval) => `[${fixed(m.low)}, ${fixed(m.high)}]`;
const corpusLine = (m: MeanWithInterval | null) => (m ? `${fixed(m.mean)} ${interval(m)} over ${m.n} scored turns` : 'no scored turns');

export function renderPifMarkdown(section: PifSection): string {
  const { report } = section;
  const lines = [
    '## Multi-turn instruction following (PIF, seed 002)',
    '',
    `Model: \`${section.model}\`${section.simulated ? ' — **simulated** (offline simulator answers, not a real model)' : ''}`,
    '',
    `Corpus PIF: ${corpusLine(report.corpus)}.` +
      (report.turnsBeforeInstruction > 0
        ? ` ${report.turnsBeforeInstruction} turn${report.turnsBeforeInstruction === 1 ? '' : 's'} came before any instruction (PIF 1 by seed 002's default, included).`
        : ''),
  ];
  if (section.appendAll) {
    const plain = report.corpus?.mean;
    const appended = section.appendAll.corpus?.mean;
    const delta = plain !== undefined && appended !== undefined ? ` (${appended >= plain ? '+' : ''}${((appended - plain) * 100).toFixed(1)} points)` : '';
    lines.push('', `With every instruction appended at the end: ${corpusLine(section.appendAll.corpus)}${delta}.`);
  }
  lines.push('', '| Turn | Turns scored | PIF | 95% interval |', '| ---: | ---: | ---: | --- |');
  for (const row of report.perTurn) lines.push(`| ${row.turn} | ${row.n} | ${fixed(row.mean)} | ${interval(row)} |`);
  lines.push('', '| Instructions given | Turns scored | PIF | 95% interval |', '| ---: | ---: | ---: | --- |');
  for (const row of report.perInstructionCount) lines.push(`| ${row.instructions} | ${row.n} | ${fixed(row.mean)} | ${interval(row)} |`);
  if (section.nk.length > 0) {
    const n = section.nk[0]!.n;
    lines.push('', `PIF-${n}-K: share of turns where at least K of ${n} sampled answers follow every instruction.`, '', '| Metric | Value |', '| --- | ---: |');
    for (const row of section.nk) lines.push(`| PIF-${row.n}-${row.k} | ${row.value === null ? 'n/a' : fixed(row.value)} |`);
  }
  return `${lines.join('\n')}\n`;
}
