/**
 * The abort signal of the work in progress (a cancelled activity, a stopping worker), carried
 * implicitly through the async calls under it. Every model request is sent with it and every retry
 * wait ends on it, so a cancelled build stops paying at once instead of when its activities finish;
 * loops over samples check it between items. Implicit because one cached ModelCaller serves many
 * activity calls at once, each with its own cancellation.
 */
import { setMaxListeners } from 'node:events';
import { ScopedValue } from './workScope.js';

const current = new ScopedValue<AbortSignal>();

/** Runs `work` with `signal` as the abort signal of everything it calls. */
export function withAbortSignal<T>(signal: AbortSignal, work: () => Promise<T>): Promise<T> {
  // Every request and retry wait in flight under it listens for the abort (llm.concurrency of them
  // and more), and removes its listener when done: many listeners here are expected, not a leak.
  setMaxListeners(0, signal);
  return current.run(signal, work);
}

/** The signal of the work in progress, if it has one. */
export function abortSignal(): AbortSignal | undefined {
  return current.get();
}

/** Throws the abort reason when the work in progress was aborted: a loop calls it before each item. */
export function throwIfAborted(): void {
  current.get()?.throwIfAborted();
}
