/**
 * The one shape of an activity's no-progress watchdog: the time of the last progress, a bound, and
 * the retryable failure an attempt gets once it stood still for longer than the bound. A lane slice
 * (sliceWatchdog.ts, ADR 0009) and extracting a source's archives (archiveWatch.ts, ADR 0078) each
 * say what counts as progress and word the failure; withHeartbeat asks `stalled()` at each beat.
 */
import type { ApplicationFailure } from '@temporalio/common';

export abstract class StallWatch {
  private last: number;

  constructor(
    protected readonly boundMs: number,
    protected readonly now: () => number = Date.now,
  ) {
    this.last = now();
  }

  /** Progress: the count starts again. */
  advanced(): void {
    this.last = this.now();
  }

  /** The attempt's failure, once it has made no progress for longer than the bound. */
  stalled(): ApplicationFailure | undefined {
    const still = this.now() - this.last;
    return still <= this.boundMs ? undefined : this.failure(still);
  }

  /** The failure after `stillMs` without progress, naming what stood still. */
  protected abstract failure(stillMs: number): ApplicationFailure;
}
