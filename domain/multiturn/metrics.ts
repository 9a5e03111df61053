/**
 * MMMT-IF's instruction-following metrics (seed 002, §3 and §5.1), as pure functions over verdicts.
 *
 * - PIF(X, Y) (eq. 1): of the instructions given in the context X so far (every earlier turn's, not
 *   only this turn's), the fraction the response Y follows. With no instruction given yet the ratio
 *   is 0/0: such a turn has no PIF and is left out of every mean below (the paper's chats give their
 *   first instruction at turn 1, so it never meets the case; a generated chat may).
 * - Corpus PIF (eq. 2): the mean of PIF over the turns scored.
 * - PIF per turn (eq. 3): the corpus PIF of the turns at question turn j, over the chats that have a
 *   scored turn j, with a 95% interval from the Bernoulli approximation (§5.1): the standard error of
 *   a Bernoulli variable of the same mean, sqrt(p(1-p)/n). It is conservative because on [0, 1] the
 *   Bernoulli distribution has the largest variance for a given mean.
 * - PIF-N-K (eq. 4): N responses sampled per turn; the turn scores 1 when at least K of them have
 *   PIF = 1. Corpus PIF-N-K is the mean over turns; PIF-N-1 >= PIF-N-2 >= ... >= PIF-N-N (eq. 5).
 */

/** 1.96: the two-sided 95% quantile of the normal distribution. */
const Z95 = 1.959963984540054;

/** PIF(X, Y): `followed` holds one verdict per instruction given so far. Undefined when none was given. */
export function pif(followed: readonly boolean[]): number | undefined {
  if (followed.length === 0) return undefined;
  return followed.filter(Boolean).length / followed.length;
}

/** One scored response: the chat it belongs to, its question turn (1-based) and its PIF. */
export interface TurnPif {
  chatId: string;
  turn: number;
  pif: number;
}

/** Eq. (2): the mean PIF over the turns given; undefined for none. */
export function corpusPif(scores: ReadonlyArray<{ pif: number }>): number | undefined {
  return mean(scores.map((s) => s.pif));
}

export interface TurnSummary {
  turn: number;
  /** Chats with a scored response at this turn. */
  n: number;
  pif: number;
  /** 95% Bernoulli-approximation interval, clipped to [0, 1]. */
  low: number;
  high: number;
}

/** Eq. (3) for every turn present, in turn order, each with its 95% interval. */
export function pifPerTurn(scores: readonly TurnPif[]): TurnSummary[] {
  const byTurn = new Map<number, number[]>();
  for (const s of scores) {
    if (!Number.isInteger(s.turn) || s.turn < 1) throw new Error(`chat ${s.chatId}: turn ${s.turn} is not a positive integer`);
    byTurn.set(s.turn, [...(byTurn.get(s.turn) ?? []), s.pif]);
  }
  return [...byTurn.entries()]
    .sort(([a], [b]) => a - b)
    .map(([turn, values]) => {
      const p = mean(values)!;
      const half = bernoulliHalfWidth(p, values.length);
      return { turn, n: values.length, pif: p, low: Math.max(0, p - half), high: Math.min(1, p + half) };
    });
}

/** Half-width of the 95% interval of a mean p over n draws, taking the variance as a Bernoulli's. */
export function bernoulliHalfWidth(p: number, n: number): number {
  return Z95 * Math.sqrt((p * (1 - p)) / n);
}

/** Eq. (4) for one turn: 1 when at least k of the sampled responses' PIFs equal 1. */
export function pifNK(samplePifs: readonly number[], k: number): 0 | 1 {
  if (!Number.isInteger(k) || k < 1 || k > samplePifs.length) {
    throw new Error(`PIF-N-K: K must be an integer in 1..N (N = ${samplePifs.length}), got ${k}`);
  }
  return samplePifs.filter((p) => p === 1).length >= k ? 1 : 0;
}

/**
 * Corpus PIF-N-K for K = 1..N over turns that each carry exactly N sampled PIFs. Returns the list
 * indexed by K - 1. A turn with a different number of samples is an error, not a silent mix of Ns.
 */
export function corpusPifNK(turns: ReadonlyArray<{ chatId: string; turn: number; samplePifs: readonly number[] }>, n: number): number[] {
  if (turns.length === 0) return [];
  for (const t of turns) {
    if (t.samplePifs.length !== n) throw new Error(`chat ${t.chatId} turn ${t.turn}: ${t.samplePifs.length} sampled responses, expected N = ${n}`);
  }
  return Array.from({ length: n }, (_, i) => mean(turns.map((t) => pifNK(t.samplePifs, i + 1)))!);
}

function mean(values: readonly number[]): number | undefined {
  return values.length === 0 ? undefined : values.reduce((a, b) => a + b, 0) / values.length;
}
