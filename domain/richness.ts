/**
 * Which scored images a richness rule keeps. Pure and deterministic: a candidate's fate depends on
 * its score, its tag count and, for a top fraction, on its rank among the window's candidates
 * (ties go to the lower rank, i.e. the earlier one in the seeded order).
 */

/** A sample's richness, as recorded with it. */
export interface RichnessScore {
  scorer: string;
  /** IC9600-like complexity (imported, endpoint), edge density (statistic) or tag count (vlm-tags). */
  score: number;
  /** RAM++-like tag count, when the scorer gives one. */
  tags?: number;
  /** statistic: luminance entropy in bits, kept beside the edge density. */
  entropyBits?: number;
  /** vlm-tags: the tags came from the mmif simulator, not a model. */
  simulated?: boolean;
}

export type ScoreOutcome = { ok: true; value: RichnessScore } | { ok: false; reason: string };

export interface RichnessRule {
  minScore?: number;
  minTags?: number;
  /** Best-scoring share of the window's scored candidates kept (after the thresholds). */
  topFraction?: number;
  /** A top fraction taken over a whole score file instead (imported scores): the lowest score it keeps. */
  fileCutoff?: { score: number; fraction: number };
}

type RichnessDecision = { selected: true } | { selected: false; reason: string };

/** One decision per candidate (candidates in rank order). */
export function judgeWindow(outcomes: readonly ScoreOutcome[], rule: RichnessRule): RichnessDecision[] {
  const decisions: RichnessDecision[] = outcomes.map((o) => {
    if (!o.ok) return { selected: false, reason: `unscorable: ${o.reason}` };
    const { score, tags } = o.value;
    if (rule.minScore !== undefined && score < rule.minScore) return { selected: false, reason: `below-min-score: ${score} < ${rule.minScore}` };
    if (rule.fileCutoff !== undefined && score < rule.fileCutoff.score) {
      return { selected: false, reason: `below-top-fraction: score ${score} < ${rule.fileCutoff.score}, the lowest of the best ${rule.fileCutoff.fraction} of the scores file` };
    }
    if (rule.minTags !== undefined && tags === undefined) return { selected: false, reason: 'no-tag-count: the scorer gave no tag count' };
    if (rule.minTags !== undefined && tags! < rule.minTags) return { selected: false, reason: `below-min-tags: ${tags} < ${rule.minTags}` };
    return { selected: true };
  });
  if (rule.topFraction === undefined) return decisions;
  const passing = outcomes.flatMap((o, i) => (o.ok && decisions[i]!.selected ? [{ i, score: o.value.score }] : []));
  const keep = Math.ceil(rule.topFraction * passing.length);
  const ordered = [...passing].sort((a, b) => b.score - a.score || a.i - b.i);
  for (const { i, score } of ordered.slice(keep))
    decisions[i] = { selected: false, reason: `below-top-fraction: score ${score} outside the best ${rule.topFraction} of its window` };
  return decisions;
}

/**
 * The authors' selection over a whole score file: sorted by score, the best `fraction` kept. As a
 * threshold (the score of the last kept entry) it no longer depends on which candidates a window holds.
 */
export function topFractionCutoff(scores: readonly number[], fraction: number): number {
  const sorted = [...scores].sort((a, b) => b - a);
  return sorted[Math.max(0, Math.ceil(fraction * sorted.length) - 1)] ?? Number.POSITIVE_INFINITY;
}

/** Count, extremes, mean and deciles of a list of scores, for reports. */
export function distribution(values: readonly number[]): { count: number; min: number; p10: number; p50: number; p90: number; max: number; mean: number } | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return {
    count: sorted.length,
    min: sorted[0]!,
    p10: at(0.1),
    p50: at(0.5),
    p90: at(0.9),
    max: sorted[sorted.length - 1]!,
    mean: sorted.reduce((a, b) => a + b, 0) / sorted.length,
  };
}
