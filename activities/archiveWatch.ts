/**
 * The no-progress watchdog of extracting a source's gzip'd tars (activities extractArchives, ADR 0078).
 * A Hub archive of tens of GB takes hours at tens of MB/s, so that activity has no fixed time limit
 * worth the name; what bounds an attempt is this watch: progress is a compressed byte read, and an
 * attempt that reads nothing for the bound fails retryably, naming the source it was extracting.
 */
import { ApplicationFailure } from '@temporalio/common';

/** How long extracting may read nothing before its attempt fails. */
export const ARCHIVE_STALL_MS = 5 * 60_000;

export class ArchiveWatch {
  bytes = 0;
  private at: number;
  private source = '';

  constructor(
    private readonly now: () => number = Date.now,
    private readonly boundMs = ARCHIVE_STALL_MS,
  ) {
    this.at = now();
  }

  /** A new source's archives: the clock starts again (its root is listed before any byte is read). */
  start(source: string): void {
    this.source = source;
    this.at = this.now();
  }

  read(bytes: number): void {
    this.bytes += bytes;
    this.at = this.now();
  }

  /** The attempt's failure once nothing was read for the bound. */
  stalled(): ApplicationFailure | undefined {
    const still = this.now() - this.at;
    if (still <= this.boundMs) return undefined;
    return ApplicationFailure.retryable(`${this.source}: extracting its archives read nothing for ${Math.round(still / 1000)} s`, 'ArchiveStalled');
  }
}
