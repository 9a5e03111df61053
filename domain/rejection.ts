/**
 * A sample that cannot become a record. Thrown by stage logic, caught by the stage runner, and
 * stored as the sample's outcome: the build goes on and the reason lands in the shard's rejects.
 * Reasons start with a stable code ("too-small:", "invalid-json:") so they can be counted.
 */
export class SampleRejection extends Error {
  override name = 'SampleRejection';
  constructor(readonly reason: string) {
    super(reason);
  }
}
