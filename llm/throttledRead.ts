/**
 * A read of shared state (the build's budget object, the other writers' spend) done again only when
 * its last one started longer ago than a bound, and one at a time: the requests admitted while a read
 * is under way wait for that read instead of each starting their own (ADR 0080). The read's time is
 * when it started, so a change made while it ran is read again at the next bound. `fresh()` reads now,
 * whatever the age: the budget reads its limits afresh before refusing a request.
 */
export class ThrottledRead {
  private readAt = -Infinity;
  private reading?: Promise<void>;

  constructor(
    private readonly read: () => Promise<void>,
    private readonly now: () => number,
  ) {}

  /** Reads again when the last read started `maxAgeMs` or more ago; joins a read under way. */
  async refresh(maxAgeMs: number): Promise<void> {
    if (this.now() - this.readAt < maxAgeMs) return;
    await (this.reading ??= this.fresh().finally(() => (this.reading = undefined)));
  }

  /** Reads now. */
  async fresh(): Promise<void> {
    const started = this.now();
    await this.read();
    this.readAt = started;
  }
}
