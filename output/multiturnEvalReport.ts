/**
 * `mmif eval --chats`'s multi-turn report (seed 002), with the metric definitions of
 * domain/multiturn/pif.ts and the Markdown of output/pifMarkdown.ts: PIF per turn and per number of
 * instructions (95% intervals) and corpus PIF over the first sampled response of each turn (the one the
 * chat continues with), PIF-N-K for K = 1..N over all N.
 */
import { pifNk, pifReport, type PifNk, type PifReport, type ScoredResponse } from '../domain/multiturn/pif.js';
import { renderPifMarkdown } from './pifMarkdown.js';

export interface MultiturnReport {
  model: string;
  simulated: boolean;
  /** The seed 002 ablation: every instruction given so far appended to the last user turn. */
  instructionsAppended: boolean;
  chats: number;
  responsesPerTurn: number;
  pif: PifReport;
  nk: PifNk[];
}

/** `samples[s]` holds sample s of every turn; sample 0 is the response the chat continued with. */
export function scoreMultiturn(samples: ReadonlyArray<readonly ScoredResponse[]>, meta: Omit<MultiturnReport, 'responsesPerTurn' | 'pif' | 'nk'>): MultiturnReport {
  return { ...meta, responsesPerTurn: samples.length, pif: pifReport(samples[0] ?? []), nk: pifNk(samples.flat(), samples.length) };
}

export function multiturnMarkdown(r: MultiturnReport): string {
  const title = `# mmif eval (multi-turn): ${r.chats} chats, ${r.responsesPerTurn} response(s) per turn${r.instructionsAppended ? ', every instruction appended (ablation)' : ''}\n\n`;
  return title + renderPifMarkdown({ model: r.model, simulated: r.simulated, report: r.pif, nk: r.nk });
}
