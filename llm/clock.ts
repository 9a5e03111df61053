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

/**
 * The longest delay Node's timers take (a signed 32-bit count of ms, https://nodejs.org/api/timers.html#settimeoutcallback-delay-args):
 * a longer one is set to 1 ms with a TimeoutOverflowWarning. A longer wait is a timer of this length; the
 * limiter then finds it has more to wait and sets another.
 */
const MAX_TIMER_MS = 2 ** 31 - 1;

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer: (callback, ms) => {
    const timer = setTimeout(callback, Math.min(ms, MAX_TIMER_MS));
    return () => clearTimeout(timer);
  },
};
