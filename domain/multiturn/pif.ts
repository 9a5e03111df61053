/**
 * MMMT-IF's instruction-following metrics (seed 002, §3 and §5.1), pure so that builds and `mmif eval`
 * score chats with one definition; each function cites its equation. A turn before the first
 * instruction scores PIF = 1 and counts in every mean (seed 002 Fig. 5's caption: "The metric defaults
 * to 1 if no instruction has been given"; its corpus PIF is over "all 990 turns", §5.2, Table 3); the
 * report counts such turns (`turnsBeforeInstruction`) so a reader sees how many 1s are the default.
 */

/** One response at one turn, scored against every instruction given so far in its chat. */
export interface ScoredResponse {
  chatId: string;
  /** 1-based question turn. */
  turn: number;
  /** One entry per instruction given so far, in the order given: true when the response follows it. */
  followed: readonly boolean[];
}

/**
 * PIF(X, Y) (eq. 1): instructions given in context X that response Y follows / instructions given in X;
 * every earlier global instruction counts, not only the one added at this turn. 1 when none was given.
 */
export function pif(followed: readonly boolean[]): number {
  if (followed.length === 0) return 1;
  return followed.filter(Boolean).length / followed.length;
}

/**
 * PIF = 1, decided on counts so that no rounding can turn 0.999… into a pass (vacuously true before any
 * instruction).
 */
export function followsAll(followed: readonly boolean[]): boolean {
  return followed.every(Boolean);
}

export interface MeanWithInterval {
  /** Responses averaged. */
  n: number;
  mean: number;
  /** 95% interval, Bernoulli approximation, clipped to [0, 1]. */
  low: number;
  high: number;
}

/** 1.96: the two-sided 95% quantile of the normal distribution. */
const Z_95 = 1.959963984540054;

/**
 * Mean of scores in [0, 1] with its 95% interval from the Bernoulli approximation the paper uses (§5.1):
 * a [0, 1] score with mean p has variance at most p(1 - p), so p ± 1.96·sqrt(p(1 - p) / n) is a
 * conservative bound. Null for no scores.
 */
export function meanWithInterval(scores: readonly number[]): MeanWithInterval | null {
  if (scores.length === 0) return null;
  const n = scores.length;
  const mean = scores.reduce((sum, s) => sum + s, 0) / n;
  const half = Z_95 * Math.sqrt((mean * (1 - mean)) / n);
  return { n, mean, low: Math.max(0, mean - half), high: Math.min(1, mean + half) };
}

export interface PifReport {
  /** Eq. 2 over every scored response, with its interval. */
  corpus: MeanWithInterval | null;
  /** Eq. 3: one row per turn that has at least one scored response, ascending. */
  perTurn: Array<{ turn: number } & MeanWithInterval>;
  /** PIF conditional on how many instructions had been given (the paper's Figure 5). */
  perInstructionCount: Array<{ instructions: number } & MeanWithInterval>;
  /** Responses at turns before any instruction, scored 1 by the seed's default (included above). */
  turnsBeforeInstruction: number;
}

/**
 * Corpus PIF (eq. 2: the mean over answered turns), PIF per turn j (eq. 3: over the chats reaching turn j)
 * and per number of instructions given.
 */
export function pifReport(responses: readonly ScoredResponse[]): PifReport {
  const byTurn = new Map<number, number[]>();
  const byCount = new Map<number, number[]>();
  const all: number[] = [];
  let turnsBeforeInstruction = 0;
  for (const response of responses) {
    if (!Number.isInteger(response.turn) || response.turn < 1) throw new Error(`chat ${response.chatId}: turn ${response.turn} is not a positive integer`);
    const score = pif(response.followed);
    if (response.followed.length === 0) turnsBeforeInstruction++;
    all.push(score);
    push(byTurn, response.turn, score);
    push(byCount, response.followed.length, score);
  }
  return {
    corpus: meanWithInterval(all),
    perTurn: rows(byTurn).map(([turn, stats]) => ({ turn, ...stats })),
    perInstructionCount: rows(byCount).map(([instructions, stats]) => ({ instructions, ...stats })),
    turnsBeforeInstruction,
  };
}

export interface PifNk {
  n: number;
  k: number;
  /** Turns averaged (every sampled turn, those before any instruction included). */
  turns: number;
  /** Null when no turn was sampled: there is nothing to average. */
  value: number | null;
}

/**
 * PIF-N-K for K = 1..N (eq. 4): a turn scores 1 when at least K of its N sampled responses have
 * PIF = 1, the corpus value is the mean over turns, and it falls as K grows (eq. 5). `samples` holds the N responses of each turn, grouped by (chatId, turn); every
 * scored turn must have exactly N of them, since a turn with fewer could never reach K = N and would
 * bias the metric down. A turn before any instruction has PIF = 1 in all N, as for PIF.
 */
export function pifNk(samples: readonly ScoredResponse[], n: number): PifNk[] {
  if (!Number.isInteger(n) || n < 1) throw new Error(`PIF-N-K: N must be a positive integer, got ${n}`);
  const perfectByTurn = new Map<string, { sampled: number; perfect: number; instructions: number }>();
  for (const sample of samples) {
    const key = `${sample.chatId}\u0000${sample.turn}`;
    const entry = perfectByTurn.get(key) ?? { sampled: 0, perfect: 0, instructions: sample.followed.length };
    // The N samples answer one context, so they are scored against the same instructions.
    if (entry.instructions !== sample.followed.length) {
      throw new Error(`PIF-N-K: chat ${sample.chatId} turn ${sample.turn} has samples scored against ${entry.instructions} and ${sample.followed.length} instructions`);
    }
    entry.sampled++;
    if (followsAll(sample.followed)) entry.perfect++;
    perfectByTurn.set(key, entry);
  }
  const perfectCounts: number[] = [];
  for (const [key, entry] of perfectByTurn) {
    if (entry.sampled !== n) {
      const [chatId, turn] = key.split('\u0000');
      throw new Error(`PIF-N-K: chat ${chatId} turn ${turn} has ${entry.sampled} sampled responses, expected N = ${n}`);
    }
    perfectCounts.push(entry.perfect);
  }
  const result: PifNk[] = [];
  for (let k = 1; k <= n; k++) {
    const hits = perfectCounts.filter((perfect) => perfect >= k).length;
    result.push({ n, k, turns: perfectCounts.length, value: perfectCounts.length === 0 ? null : hits / perfectCounts.length });
  }
  return result;
}

function push(into: Map<number, number[]>, key: number, score: number): void {
  const list = into.get(key);
  if (list) list.push(score);
  else into.set(key, [score]);
}

function rows(groups: Map<number, number[]>): Array<[number, MeanWithInterval]> {
  return [...groups.entries()].sort(([a], [b]) => a - b).map(([key, scores]) => [key, meanWithInterval(scores) as MeanWithInterval]);
}
