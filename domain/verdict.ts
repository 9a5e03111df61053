/** The verdict on one constraint of one answer: pure data, shared by verification, rejections and records. */
import type { VerifierCall } from './constraints/compatibility.js';

export type VerificationMethod = 'rule' | 'direct_judge' | 'compare_judge';

export interface Verdict {
  /** Index into the sample's constraints. */
  index: number;
  type: string;
  method: VerificationMethod;
  passed: boolean;
  calls?: VerifierCall[];
  judgeModel?: string;
  detail: string;
  /**
   * A rule verdict's second opinion: the direct judge's score on the same constraint, asked for a
   * seeded sample of rule-checked constraints (`verification.judgeAgreementSample`) to measure
   * judge-vs-rule agreement. Never used for filtering; `passed` stays the rule's.
   */
  judgeAudit?: JudgeAudit;
}

export interface JudgeAudit {
  /** The judge's score, or null when it gave none (unparsed) or its call was unusable. */
  passed: boolean | null;
  judgeModel: string;
  detail: string;
}
