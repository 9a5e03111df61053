/**
 * Tells the work in progress (a slice) that one of its model requests got its reply: a slice's
 * no-progress watchdog (activities/sliceWatchdog.ts) counts it, so a stage that makes many calls in a
 * row is not taken for stuck between two of its samples' stage changes. Carried implicitly, like the
 * slice's tallies (tallyScope.ts), because one cached ModelCaller serves many slices at once.
 */
import { ScopedValue } from './workScope.js';

const current = new ScopedValue<() => void>();

/** Runs `work` calling `onReply` whenever a model request it makes gets a reply. */
export function withReplyProgress<T>(onReply: () => void, work: () => Promise<T>): Promise<T> {
  return current.run(onReply, work);
}

export function noteReply(): void {
  current.get()?.();
}
