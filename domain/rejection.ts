/**
 * A sample that cannot become a record. Thrown by stage logic, caught by the stage runner, and
 * stored as the sample's outcome: the build goes on and the reason lands in the shard's rejects.
 * Reasons start with a stable code ("too-small:", "invalid-json:") so they can be counted.
 */
export interface RejectionDetails {
  verdicts?: import('../pipeline/stageState.js').Verdict[];
  /** The DPO strategy of a discarded pair. */
  strategy?: string;
}

export class SampleRejection extends Error {
  override name = 'SampleRejection';
  constructor(
    readonly reason: string,
    /** What a verification failure was based on; kept in the rejects output and manifest stats. */
    readonly details?: RejectionDetails,
  ) {
    super(reason);
  }
}
