/**
 * `mmif eval --chats`'s multi-turn report (seed 002): PIF per turn with 95% intervals, corpus PIF and
 * corpus PIF-N-K for K = 1..N, from each turn's N sampled PIFs (turns with no instruction given yet
 * have no PIF and are left out).
 */
import { corpusPif, corpusPifNK, pifPerTurn, type TurnSummary } from '../domain/multiturn/metrics.js';

export interface ScoredTurn {
  chatId: string;
  turn: number;
  /** PIF of each sampled response; undefined entries: no instruction given yet. */
  samplePifs: Array<number | undefined>;
}

export interface MultiturnReport {
  model: string;
  simulated: boolean;
  /** The seed 002 ablation: every instruction given so far appended to the last user turn. */
  instructionsAppended: boolean;
  chats: number;
  responsesPerTurn: number;
  scoredTurns: number;
  /** Over the first sampled response of each turn (the one the chat continues with). */
  corpusPif: number | null;
  perTurn: TurnSummary[];
  /** Index K - 1. */
  pifNK: number[];
}

export function scoreMultiturn(turns: readonly ScoredTurn[], n: number, meta: Pick<MultiturnReport, 'model' | 'simulated' | 'instructionsAppended' | 'chats'>): MultiturnReport {
  const scored = turns.flatMap((t) => (t.samplePifs[0] === undefined ? [] : [{ ...t, samplePifs: t.samplePifs as number[] }]));
  const first = scored.map((t) => ({ chatId: t.chatId, turn: t.turn, pif: t.samplePifs[0]! }));
  return {
    ...meta,
    responsesPerTurn: n,
    scoredTurns: scored.length,
    corpusPif: corpusPif(first) ?? null,
    perTurn: pifPerTurn(first),
    pifNK: corpusPifNK(scored, n),
  };
}

const num = (x: number | null) => (x === null ? 'n/a' : x.toFixed(3));

export function multiturnMarkdown(r: MultiturnReport): string {
  return [
    `# mmif eval (multi-turn): ${r.model}${r.simulated ? ' (SIMULATED: answers came from the mmif simulator)' : ''}${r.instructionsAppended ? ', instructions appended' : ''}`,
    '',
    `${r.chats} chats, ${r.scoredTurns} turns with instructions, ${r.responsesPerTurn} response(s) per turn.`,
    '',
    `- Corpus PIF: ${num(r.corpusPif)}`,
    ...r.pifNK.map((v, i) => `- PIF-${r.responsesPerTurn}-${i + 1}: ${num(v)}`),
    '',
    '| turn | chats | PIF | 95% interval |',
    '|---|---|---|---|',
    ...r.perTurn.map((t) => `| ${t.turn} | ${t.n} | ${num(t.pif)} | [${num(t.low)}, ${num(t.high)}] |`),
    '',
  ].join('\n');
}
