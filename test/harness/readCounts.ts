/**
 * A local store that counts the reads (`get`) of each key, for tests that bound how often the
 * engine reads the store: the commit's state reads, a slice execution's memo, the budget's refresh.
 * A subclass of the real LocalStore, so everything but the counting is the store's own behaviour.
 */
import { LocalStore } from '../../storage/localStore.js';

export class ReadCounts extends LocalStore {
  readonly reads = new Map<string, number>();

  override async get(key: string): Promise<Buffer | undefined> {
    this.reads.set(key, this.readsOf(key) + 1);
    return super.get(key);
  }

  /** How many times `key` was read. */
  readsOf(key: string): number {
    return this.reads.get(key) ?? 0;
  }

  /** The most reads of one key among those `pick` picks, and how many of them were read. */
  most(pick: (key: string) => boolean): { most: number; keys: number } {
    const counts = [...this.reads].filter(([key]) => pick(key)).map(([, n]) => n);
    return { most: Math.max(0, ...counts), keys: counts.length };
  }
}
