/**
 * The no-progress watchdog of extracting a source's gzip'd tars (activities extractArchives, ADR 0078).
 * A Hub archive of tens of GB takes hours at tens of MB/s, so that activity has no fixed time limit
 * worth the name; what bounds an attempt is this watch: progress is a compressed byte read, and an
 * attempt that reads nothing for the bound fails retryably, naming the source it was extracting
 * (the watch's shape: stallWatch.ts).
 */
import { ApplicationFailure } from '@temporalio/common';
import { StallWatch } from './stallWatch.js';

/** How long extracting may read nothing before its attempt fails. */
const ARCHIVE_STALL_MS = 5 * 60_000;

export class ArchiveWatch extends StallWatch {
  bytes = 0;
  private source = '';

  constructor(now: () => number = Date.now, boundMs = ARCHIVE_STALL_MS) {
    super(boundMs, now);
  }

  /** A new source's archives: the clock starts again (its root is listed before any byte is read). */
  start(source: string): void {
    this.source = source;
    this.advanced();
  }

  read(bytes: number): void {
    this.bytes += bytes;
    this.advanced();
  }

  protected failure(still: number): ApplicationFailure {
    return ApplicationFailure.retryable(`${this.source}: extracting its archives read nothing for ${Math.round(still / 1000)} s`, 'ArchiveStalled');
  }
}
