/**
 * What one build has paid for model calls, across all its workers and runs: the sum the hard budget
 * (buildBudget.ts) is checked against.
 *
 * Each worker process keeps its own running total of the calls it paid for this build, and writes
 * it, whole, to an object of its own under the build (`spend/<writer>.json`; one writer per ledger:
 * a process whose bounded caches dropped and remade a build's budget has two, both counted). A paid call is counted
 * once, by the process that paid, when its reply arrives: cache hits are never counted (the model
 * cache already holds every paid reply, so a retried activity, a resumed or re-run build pays nothing
 * twice and counts nothing twice), and the objects of earlier processes and runs stay, so the total
 * survives restarts and resumes. The build's total is the sum of every writer's object: its own
 * figure exact and at once, the others' as last read (read again when older than `maxAgeMs`).
 *
 * Writes are coalesced: one write in flight per process, the next carrying the newest total, so a
 * busy worker writes far less than once per call. A process killed between a call and its write
 * loses that call from the total (at most the calls paid while one write was in flight); the
 * retried stage then finds the reply in the cache and pays nothing more.
 */
import { randomUUID } from 'node:crypto';
import { getJson, putJson, type ObjectStore } from '../storage/objectStore.js';

export interface Spend {
  usd: number;
  requests: number;
}

const none = (): Spend => ({ usd: 0, requests: 0 });

export class SpendLedger {
  private readonly own: Spend = none();
  private others: Spend = none();
  private readAt = -Infinity;
  private reading?: Promise<void>;
  private writing?: Promise<void>;
  private dirty = false;
  private readonly key: string;

  constructor(
    private readonly store: ObjectStore,
    /** The build's spend folder (BuildLayout.spendPrefix). */
    private readonly prefix: string,
    private readonly now: () => number = Date.now,
    writer: string = randomUUID(),
  ) {
    this.key = `${prefix}${writer}.json`;
  }

  /** Adds a paid call (or the several requests of one) to this process's total, and writes it. */
  add(spend: Spend): Promise<void> {
    this.own.usd += spend.usd;
    this.own.requests += spend.requests;
    this.dirty = true;
    return (this.writing ??= this.write());
  }

  /** The build's total: this process's exact figure plus the others' as last read. */
  total(): Spend {
    return { usd: this.own.usd + this.others.usd, requests: this.own.requests + this.others.requests };
  }

  /** Reads the other writers' totals again when the last read is older than `maxAgeMs`. */
  async refresh(maxAgeMs: number): Promise<void> {
    if (this.now() - this.readAt < maxAgeMs) return;
    await (this.reading ??= this.read().finally(() => (this.reading = undefined)));
  }

  /** Waits until this process's total is written. */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async read(): Promise<void> {
    const started = this.now();
    const others = none();
    for await (const { key } of this.store.list(this.prefix)) {
      if (key === this.key || !key.endsWith('.json')) continue;
      const spend = await getJson<Spend>(this.store, key);
      others.usd += spend?.usd ?? 0;
      others.requests += spend?.requests ?? 0;
    }
    this.others = others;
    this.readAt = started;
  }

  private async write(): Promise<void> {
    try {
      while (this.dirty) {
        this.dirty = false;
        await putJson(this.store, this.key, { ...this.own });
      }
    } catch (err) {
      this.dirty = true; // written by the next add (or flush's caller retrying)
      throw err;
    } finally {
      this.writing = undefined;
    }
  }
}
