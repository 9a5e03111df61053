/**
 * A sample that cannot become a record. Thrown by stage logic, caught by the stage runner, and
 * stored as the sample's outcome: the build goes on and the reason lands in the shard's rejects.
 * Reasons start with a stable code ("too-small:", "invalid-json:") so they can be counted.
 */
import type { Verdict } from './verdict.js';
import { RecordError } from './errors.js';

export interface RejectionDetails {
  verdicts?: Verdict[];
  /** A regenerated answer's first attempt's verdicts (the quality report's pass rate before regeneration). */
  firstVerdicts?: Verdict[];
  /** The DPO strategy of a discarded pair. */
  strategy?: string;
  /** Rejected answers of a discarded pair refused, by pair rule ("uninformative-pair", "chosen-loses"). */
  ruleRejections?: Record<string, number>;
  /** Indices of a discarded pair's constraints at stake (its verdicts also cover rule-checked others). */
  atStake?: number[];
  /**
   * Set when a model call, not the sample, was at fault (the endpoint refused the request, or every
   * try gave an unusable reply): such rejections count against the shard's error budget, and a
   * re-run of the shard tries the sample again.
   */
  modelCall?: ModelCallFault;
}

/** What went wrong with a model call, for messages: the excerpt has every secret masked. */
export interface ModelCallFault {
  endpoint: string;
  model: string;
  /** HTTP status; 200 when the endpoint answered but the reply was unusable. */
  status: number;
  excerpt: string;
  /**
   * The tries the call was given before the sample was rejected: llm.replyTries for replies that
   * stayed unusable, 1 for a refusal (never tried again). Absent in rejects written before it was kept.
   */
  tries?: number;
}

export class SampleRejection extends RecordError {
  override name = 'SampleRejection';
  constructor(
    readonly reason: string,
    /** What a verification failure was based on; kept in the rejects output and manifest stats. */
    readonly details?: RejectionDetails,
  ) {
    super(reason);
  }
}
