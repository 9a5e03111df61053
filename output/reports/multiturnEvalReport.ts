/**
 * `mmif eval --chats`'s multi-turn report (seed 002), with the metric definitions of
 * domain/multiturn/pif.ts and the Markdown of output/reports/pifMarkdown.ts: PIF per turn and per number of
 * instructions (95% intervals) and corpus PIF over the first sampled response of each turn (the one the
 * chat continues with), PIF-N-K for K = 1..N over all N.
 */
import { pifNk, pifReport, type PifNk, type PifReport, type ScoredResponse } from '../../domain/multiturn/pif.js';
import type { VacuousPolicy } from '../../domain/verdict.js';
import { turnsFollowed } from '../../pipeline/evaluation/chatEval.js';
import type { ItemResult } from '../../pipeline/evaluation/evalSlice.js';
import type { EvalIdentity } from './evalReport.js';
import type { StageUsage } from '../contracts/manifest.js';
import { renderPifMarkdown } from './pifMarkdown.js';

export interface MultiturnReport extends EvalIdentity {
  model: string;
  simulated: boolean;
  /** The seed 002 ablation: every instruction given so far appended to the last user turn. */
  instructionsAppended: boolean;
  chats: number;
  responsesPerTurn: number;
  pif: PifReport;
  nk: PifNk[];
  /** Chats that could not be evaluated, with the reason. */
  rejected: Array<{ id: string; reason: string }>;
  usage: Record<string, StageUsage>;
}

/** `samples[s]` holds sample s of every turn; sample 0 is the response the chat continued with. */
export function scoreMultiturn(samples: ReadonlyArray<readonly ScoredResponse[]>, meta: Omit<MultiturnReport, 'responsesPerTurn' | 'pif' | 'nk'>): MultiturnReport {
  return { ...meta, responsesPerTurn: samples.length, pif: pifReport(samples[0] ?? []), nk: pifNk(samples.flat(), samples.length) };
}

/** Regroups the chats' turns by sample index, as scoreMultiturn takes them. */
export function scoredBySample(results: readonly ItemResult[], responsesPerTurn: number, policy: VacuousPolicy): ScoredResponse[][] {
  return Array.from({ length: responsesPerTurn }, (_, s) =>
    results.flatMap((r) => (r.turns ?? []).map((t) => ({ chatId: r.id, turn: t.turn, followed: turnsFollowed(t, policy)[s]! }))),
  );
}

export function multiturnMarkdown(r: MultiturnReport): string {
  const title = `# mmif eval (multi-turn): ${r.chats} chats, ${r.responsesPerTurn} response(s) per turn${r.instructionsAppended ? ', every instruction appended (ablation)' : ''}\n\nEval \`${r.evalId}\`.\n\n`;
  const rejected = r.rejected.length > 0 ? `\n${r.rejected.length} chat(s) could not be evaluated: ${r.rejected.map((x) => `${x.id} (${x.reason})`).join('; ')}.\n` : '';
  return title + renderPifMarkdown({ model: r.model, simulated: r.simulated, report: r.pif, nk: r.nk }) + rejected;
}
