/**
 * A lane slice's no-progress watchdog (docs/adr/0009-slice-progress-watchdog.md). A slice activity
 * (runSliceStages) holds sample lanes of its worker, and its timer heartbeat proves only that the
 * process lives. Progress is a sample advancing a stage, a reply to one of its model requests
 * (llm/replyProgress.ts), or the slice moving up in the lane line (LanePool.place). When none came
 * for the bound, the attempt fails, retryably, naming the slice and how long it stood still: its lanes
 * go to the slices that move, and Temporal tries it again.
 */
import { ApplicationFailure } from '@temporalio/common';
import { LANES_PER_SLOT } from '../domain/sampleLanes.js';
import type { BuildConfig } from '../config/buildConfig.js';
import { StallWatch } from './stallWatch.js';

/**
 * How long a slice may go without progress: a sample holding a lane may wait in its endpoint's limiter
 * behind the other lanes of its slot (LANES_PER_SLOT share one), each of whose attempts ends within
 * llm.timeoutMs and backs off at most llm.retry.maxDelayMs before the next.
 */
export function noProgressBoundMs(llm: Pick<BuildConfig['llm'], 'timeoutMs' | 'retry'>): number {
  return LANES_PER_SLOT * (llm.timeoutMs + llm.retry.maxDelayMs);
}

export interface LinePlace {
  ahead: number;
  waiting: number;
}

export class ProgressWatch extends StallWatch {
  private place?: LinePlace;

  constructor(
    /** Names the slice in the failure: its shard, samples and stages. */
    private readonly slice: string,
    boundMs: number,
    now: () => number = Date.now,
  ) {
    super(boundMs, now);
  }

  /** The slice's place in line, seen at each heartbeat: fewer samples ahead, or fewer of its own waiting, is progress. */
  inLine(place: LinePlace): void {
    if (this.place && (place.ahead < this.place.ahead || place.waiting < this.place.waiting)) this.advanced();
    this.place = place;
  }

  protected failure(still: number): ApplicationFailure {
    return ApplicationFailure.retryable(
      `slice ${this.slice} made no progress for ${seconds(still)} (no sample advanced a stage, no model reply came, no move in the lane line; ` +
        `the bound is ${seconds(this.boundMs)}, ${LANES_PER_SLOT} x (llm.timeoutMs + llm.retry.maxDelayMs)): its attempt failed, to be retried`,
      'SliceMadeNoProgress',
    );
  }
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
