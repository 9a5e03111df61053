/** The verdict on one constraint of one answer: pure data, shared by verification, rejections and records. */
import type { VerifierCall } from './constraints/compatibility.js';

export type VerificationMethod = 'rule' | 'direct_judge' | 'compare_judge';

export interface Verdict {
  /** Index into the sample's constraints. */
  index: number;
  type: string;
  method: VerificationMethod;
  /** The verdict as the reference gives it (a vacuous pass included). */
  passed: boolean;
  /**
   * Rule verdicts only: the answer holds nothing the constraint speaks of (no number for a precision
   * check, no paragraph for a per-paragraph one, an empty answer, ...; verification/functions.ts), so
   * a pass was never exercised. Whether such a pass counts is the build's `verification.vacuous`.
   */
  vacuous?: boolean;
  calls?: VerifierCall[];
  judgeModel?: string;
  detail: string;
  /**
   * A rule verdict's second opinion: the direct judge's score on the same constraint, asked for a
   * seeded sample of rule-checked constraints (`verification.judgeAgreementSample`) to measure
   * judge-vs-rule agreement. Never used for filtering; `passed` stays the rule's.
   */
  judgeAudit?: JudgeAudit;
  /**
   * A direct-judge verdict not asked again: the same judge had already scored this same text on this
   * constraint earlier in the sample (pipeline/stages/answer/priorJudgements.ts), and this is that
   * score. `answer`: the chosen answer's verification; `vision_dependence`: the check of the answer
   * made without the image. Absent when this verdict's own judge call decided it.
   */
  reusedFrom?: VerdictOrigin;
  /**
   * Compare-judge verdicts only: the answer generated without this constraint, that the judge compared
   * the answer with (Fig. 21). A reward scores a fresh response against this same text (domain/groundTruth.ts).
   */
  without?: string;
}

/** Where a reused judge verdict was first given within its sample. */
export type VerdictOrigin = 'answer' | 'vision_dependence';

interface JudgeAudit {
  /** The judge's score, or null when it gave none (unparsed) or its call was unusable. */
  passed: boolean | null;
  judgeModel: string;
  detail: string;
}

/**
 * Whether a vacuous pass counts: `fail` (builds' default) credits no pass the answer never exercised;
 * `pass` keeps the reference's semantics (MM-IFEval's functions, `mmif verify`).
 */
export const VACUOUS_POLICIES = ['fail', 'pass'] as const;
export type VacuousPolicy = (typeof VACUOUS_POLICIES)[number];

/** Whether a verdict counts as followed: passed, and not vacuously unless the policy lets vacuous passes count. */
export function credited(v: Pick<Verdict, 'passed' | 'vacuous'>, policy: VacuousPolicy): boolean {
  return v.passed && !(policy === 'fail' && v.vacuous === true);
}

/** Share of verdicts credited (1 with none: nothing to fail). */
export function creditedRate(verdicts: ReadonlyArray<Pick<Verdict, 'passed' | 'vacuous'>>, policy: VacuousPolicy): number {
  return verdicts.length === 0 ? 1 : verdicts.filter((v) => credited(v, policy)).length / verdicts.length;
}
