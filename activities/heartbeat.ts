import { Context } from '@temporalio/activity';
import { withAbortSignal } from '../llm/abortScope.js';

/**
 * Heartbeats on a timer while `work` runs: a killed worker is noticed within the heartbeat timeout,
 * and a cancelled build (or a shutting-down worker) reaches the activity, whose cancellation signal
 * then aborts every model call and sample loop under `work` (llm/abortScope.ts). The SDK throttles
 * what it actually sends.
 */
export async function withHeartbeat<T>(work: () => Promise<T>): Promise<T> {
  const context = Context.current();
  const timer = setInterval(() => context.heartbeat(), 1_000);
  try {
    return await withAbortSignal(context.cancellationSignal, work);
  } finally {
    clearInterval(timer);
  }
}
