/**
 * A Clock (llm/clock.ts) that moves only when a test moves it, so time-based behaviour (pacing,
 * pauses, refills) is asserted at exact instants instead of by sleeping and bounding wall-clock time.
 */
import type { Clock } from '../../llm/clock.js';

interface Timer {
  at: number;
  order: number;
  callback: () => void;
}

/** Resolves once every promise reaction already queued has run (one turn of the event loop). */
export const settled = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export class ManualClock implements Clock {
  private time: number;
  private timers: Timer[] = [];
  private created = 0;

  constructor(start = Date.parse('2030-01-01T00:00:00Z')) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  setTimer(callback: () => void, ms: number): () => void {
    const timer = { at: this.time + Math.max(0, ms), order: this.created++, callback };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  }

  /** Moves time forward by `ms`, firing the timers due on the way in order, each followed by the work it sets off. */
  async advance(ms: number): Promise<void> {
    const end = this.time + ms;
    for (;;) {
      await settled();
      const due = this.timers.filter((t) => t.at <= end).sort((a, b) => a.at - b.at || a.order - b.order)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.time = due.at;
      due.callback();
    }
    this.time = end;
    await settled();
  }
}
