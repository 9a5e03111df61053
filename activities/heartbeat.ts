/**
 * Heartbeating for long activities, so a dead worker is noticed within the heartbeat timeout and a
 * cancelled build reaches the model calls and sample loops it has to stop.
 */
import { Context } from '@temporalio/activity';
import { withAbortSignal } from '../llm/abortScope.js';

/**
 * Heartbeats on a timer while `work` runs: a killed worker is noticed within the heartbeat timeout,
 * and a cancelled build (or a shutting-down worker) reaches the activity, whose cancellation signal
 * then aborts every model call and sample loop under `work` (llm/abortScope.ts). The SDK throttles
 * what it actually sends. `details` is sent with each heartbeat: what describing the activity
 * shows while it runs, and what its next attempt reads back (Context.current().info.heartbeatDetails).
 * `stalled`, asked at each heartbeat, fails the attempt with the error it returns, aborting `work`.
 */
export async function withHeartbeat<T>(work: () => Promise<T>, details?: () => unknown, stalled?: () => Error | undefined): Promise<T> {
  const context = Context.current();
  const stall = new AbortController();
  const stopped = new Promise<never>((_, fail) => stall.signal.addEventListener('abort', () => fail(stall.signal.reason as Error), { once: true }));
  stopped.catch(() => {}); // raced below; unobserved when the work ends first
  const timer = setInterval(() => {
    context.heartbeat(details?.());
    const failure = stall.signal.aborted ? undefined : stalled?.();
    if (failure) stall.abort(failure);
  }, 1_000);
  try {
    // Raced: work that ignores the abort still fails the attempt on time.
    return await Promise.race([withAbortSignal(AbortSignal.any([context.cancellationSignal, stall.signal]), work), stopped]);
  } catch (err) {
    // The details as they were at the failure, for the next attempt: the timer may not have sent them.
    if (details) context.heartbeat(details());
    throw stall.signal.aborted ? (stall.signal.reason as Error) : err;
  } finally {
    clearInterval(timer);
  }
}
