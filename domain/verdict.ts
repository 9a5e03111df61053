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
}
