/**
 * Time as admission control sees it (llm/endpointLimiter.ts): the current time and one-shot timers.
 * Injectable, so that tests move time forward themselves instead of sleeping and asserting
 * wall-clock bounds (test/harness/manualClock.ts).
 */
export interface Clock {
  /** Milliseconds since the epoch, as Date.now(). */
  now(): number;
  /** Calls `callback` once after `ms`; the function returned cancels it. */
  setTimer(callback: () => void, ms: number): () => void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer: (callback, ms) => {
    const timer = setTimeout(callback, ms);
    return () => clearTimeout(timer);
  },
};
