import { Context } from '@temporalio/activity';
import { withAbortSignal } from '../llm/abortScope.js';

/**
 * Heartbeats on a timer while `work` runs: a killed worker is noticed within the heartbeat timeout,
 * and a cancelled build (or a shutting-down worker) reaches the activity, whose cancellation signal
 * then aborts every model call and sample loop under `work` (llm/abortScope.ts). The SDK throttles
 * what it actually sends. `details` is sent with each heartbeat: what describing the activity
 * shows while it runs, and what its next attempt reads back (Context.current().info.heartbeatDetails).
 */
export async function withHeartbeat<T>(work: () => Promise<T>, details?: () => unknown): Promise<T> {
  const context = Context.current();
  const timer = setInterval(() => context.heartbeat(details?.()), 1_000);
  try {
    return await withAbortSignal(context.cancellationSignal, work);
  } catch (err) {
    // The details as they were at the failure, for the next attempt: the timer may not have sent them.
    if (details) context.heartbeat(details());
    throw err;
  } finally {
    clearInterval(timer);
  }
}
