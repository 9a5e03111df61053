/**
 * One verdict per (constraint, text) within a sample. The direct judge (with the image) can be asked
 * about one answer text more than once: the vision-dependence check scores the answer made without
 * the image, and under `no_image` the rejected stage's first answer is that very text (the same
 * request, a cache hit); a chosen answer made without looking at the image can equal it too. Judged
 * twice in differently shaped prompts, a text could pass and fail the same constraint (issue 35: 5 of
 * 6 identical `no_image` pairs). So a direct-judge score already given on a text is reused, not asked
 * again (and not paid again), and the verdict says where it came from (`reusedFrom`).
 * A compare-judge verdict is a different question (the answer against one made without the
 * constraint) and is never reused as a direct-judge one; its record names its own method.
 */
import type { Verdict, VerdictOrigin } from '../../../domain/verdict.js';
import type { AnswerResult } from '../../run/stageState.js';

/** A direct-judge score given earlier in the sample on `answer` for constraint `index`. */
export interface PriorJudgement {
  answer: string;
  index: number;
  passed: boolean;
  from: VerdictOrigin;
}

/** The scores the answer stage gave: the chosen answer's direct-judge verdicts and the vision-dependence check's. */
export function priorJudgements(answer: Pick<AnswerResult, 'answer' | 'verdicts' | 'visionDependence'>): PriorJudgement[] {
  const chosen = answer.verdicts.flatMap((v) =>
    v.method === 'direct_judge' && !unscored(v) ? [{ answer: answer.answer, index: v.index, passed: v.passed, from: v.reusedFrom ?? ('answer' as const) }] : [],
  );
  const vision = answer.visionDependence;
  const blind = (vision?.grounded ?? []).flatMap((g) =>
    g.passed === null ? [] : [{ answer: vision!.blindAnswer, index: g.index, passed: g.passed, from: g.reusedFrom ?? ('vision_dependence' as const) }],
  );
  return [...chosen, ...blind];
}

/** The earlier score of `answer` on constraint `index`, if the sample has one. */
export function priorJudgement(priors: readonly PriorJudgement[], answer: string, index: number): PriorJudgement | undefined {
  return priors.find((p) => p.index === index && p.answer === answer);
}

/** A direct-judge verdict with no score (the judge's reply was unparsed) decides nothing to reuse. */
const unscored = (v: Verdict): boolean => v.detail.startsWith('unparsed');
