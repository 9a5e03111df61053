/**
 * The work in progress, carried implicitly through the async calls under it: its abort signal
 * (abortScope.ts), its slice's tallies (tallyScope.ts) and reply watcher (replyProgress.ts), and
 * the limiter slot of the attempt running (attemptSlot.ts), each a ScopedValue of its module.
 * Implicit because one cached ModelCaller serves many activity calls at once. One AsyncLocalStorage
 * holds them all: Node 20 copies every storage in use onto each promise it creates, so each
 * storage costs every await in the process (docs/adr/0085-one-async-local-storage-for-the-work-in-progress.md).
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const current = new AsyncLocalStorage<ReadonlyMap<ScopedValue<unknown>, unknown>>();

/** One value of the work in progress, used like an AsyncLocalStorage of its own. */
export class ScopedValue<T> {
  /** Runs `work` with this value set to `value` and every other one as in the scope it is called in. */
  run<R>(value: T, work: () => Promise<R>): Promise<R> {
    return current.run(new Map(current.getStore()).set(this, value), work);
  }

  /** The value in the scope of the code running now, if one is set. */
  get(): T | undefined {
    return current.getStore()?.get(this) as T | undefined;
  }
}
