/**
 * A map that keeps at most `capacity` entries, dropping the least recently used one beyond it: the
 * per-process memos of a long-lived worker (stores, build contexts, budgets) grow with every build
 * it serves otherwise. Map keeps insertion order, so a hit moves its key to the end and the first
 * key is the least recently used.
 */
export class LruCache<V> {
  private readonly entries = new Map<string, V>();

  constructor(readonly capacity: number) {
    if (!(Number.isInteger(capacity) && capacity > 0)) throw new Error(`an LRU cache holds at least one entry, not ${capacity}`);
  }

  get size(): number {
    return this.entries.size;
  }

  /** The value under `key`, made by `make` when missing; either way it becomes the most recently used. */
  get(key: string, make: () => V): V {
    let value: V;
    if (this.entries.has(key)) {
      value = this.entries.get(key)!;
      this.entries.delete(key);
    } else {
      value = make();
    }
    this.entries.set(key, value);
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.capacity) break;
      this.entries.delete(oldest);
    }
    return value;
  }

  /** Forgets `key` if it still holds `value` (a failed promise, say, that a newer entry may have replaced). */
  deleteIf(key: string, value: V): void {
    if (this.entries.get(key) === value) this.entries.delete(key);
  }

  /** The values held, least recently used first (without touching their order). */
  values(): IterableIterator<V> {
    return this.entries.values();
  }

  /** Whether `key` is held (without making it the most recently used). */
  has(key: string): boolean {
    return this.entries.has(key);
  }
}
