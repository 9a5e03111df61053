/**
 * The slot of an admitted request: released when its attempt ends or, earlier, as soon as a 2xx
 * reply has arrived (httpFetch tells it through attemptSlot()); and, when bench tracing subscribes,
 * where its slot time went (wall-clock times from `performance`, for tracing only).
 */
import diagnosticsChannel from 'node:diagnostics_channel';
import type { HeaderSource } from './rateLimitHeaders.js';
import { ScopedValue } from './workScope.js';

/** Where an admitted request's slot time went, by bench/benchWorker.ts --trace: ms since admission per event. */
export interface SlotTimes {
  /** performance.timeOrigin + performance.now() at admission. */
  admittedAt: number;
  [event: string]: number;
}

/** What code running inside an attempt (the HTTP fetch, the sent log) can tell its slot. */
export interface AttemptSlot {
  /** Marks `event` in the slot's trace, when one is traced (`slotTraces` has subscribers). */
  stamp(event: string): void;
  /**
   * The whole reply has arrived: the endpoint has finished the request, so a 2xx frees the slot now,
   * its rate-limit headers learnt first, instead of after the SDK's parsing and the caller's next
   * loop turns. Other statuses keep it until the attempt ends: a 429's pause must apply before the
   * next request goes. The token budget is corrected to the reply's usage a little later (the
   * ticket, once the SDK has parsed the body: well under a millisecond), so a request admitted in
   * between is judged on the estimate, against a per-minute window.
   */
  replied(status: number, headers: HeaderSource): void;
}

/** Published with an admitted request's times when its slot is released (subscribed to by bench tracing only). */
export const slotTraces = diagnosticsChannel.channel('mmif:limiter-slot');

export class Slot implements AttemptSlot {
  private readonly times: SlotTimes | undefined;
  private released = false;
  /** The reply's rate-limit headers have been learnt (`replied`). */
  learned = false;

  constructor(
    private readonly free: () => void,
    private readonly learn: (headers: HeaderSource) => void,
  ) {
    this.times = slotTraces.hasSubscribers ? { admittedAt: performance.timeOrigin + performance.now() } : undefined;
  }

  stamp(event: string): void {
    if (this.times) this.times[event] = performance.timeOrigin + performance.now() - this.times.admittedAt;
  }

  replied(status: number, headers: HeaderSource): void {
    if (this.times) {
      // The simulator tells its own times of the request (bench runs): when its headers arrived, when it was counted in flight (its body read) and when it was answered.
      const simulator = headers.get('x-simulator-times')?.split(',').map(Number) ?? [];
      for (const [i, at] of simulator.entries()) this.times[`simulator-${['arrived', 'counted', 'answered'][i]}`] = at - this.times.admittedAt;
    }
    if (status < 200 || status >= 300 || this.released) return;
    this.learn(headers);
    this.learned = true;
    this.release();
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    this.free();
    if (this.times) {
      this.stamp('released');
      slotTraces.publish(this.times);
    }
  }
}

/** The slot of the attempt running in this async context (limiter.run's `attempt`). */
const slots = new ScopedValue<Slot>();

/** Runs an admitted request's attempt with its slot, for attemptSlot(). */
export function runInSlot<T>(slot: Slot, attempt: () => Promise<T>): Promise<T> {
  return slots.run(slot, attempt);
}

/** The slot of the attempt this code runs in, if any; take it synchronously where the call starts (emitter callbacks may run in another context). */
export function attemptSlot(): AttemptSlot | undefined {
  return slots.get();
}
