/**
 * What one build has paid for model calls, across all its workers and runs: the sum the hard budget
 * (buildBudget.ts) is checked against. Each worker process writes its running total for the build,
 * whole, to an object of its own (`spend/<writer>.json`); a paid call is counted once, by the process
 * that paid, when its reply arrives (cache hits never: the model cache holds every paid reply, so
 * nothing is paid or counted twice), and earlier processes' objects stay, so the total survives
 * restarts and resumes. Writes are coalesced (one in flight per process); a process killed before
 * its write loses at most the calls paid meanwhile from the total, and the retried stage pays nothing.
 */
import { ThrottledRead } from './throttledRead.js';
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
  private readonly othersRead: ThrottledRead;
  private writing?: Promise<void>;
  private dirty = false;
  private readonly key: string;

  constructor(
    private readonly store: ObjectStore,
    /** The build's spend folder (BuildLayout.spendPrefix). */
    private readonly prefix: string,
    now: () => number = Date.now,
    writer: string = randomUUID(),
  ) {
    this.key = `${prefix}${writer}.json`;
    this.othersRead = new ThrottledRead(() => this.read(), now);
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
  refresh(maxAgeMs: number): Promise<void> {
    return this.othersRead.refresh(maxAgeMs);
  }

  /** Waits until this process's total is written. */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async read(): Promise<void> {
    const others = none();
    for await (const { key } of this.store.list(this.prefix)) {
      if (key === this.key || !key.endsWith('.json')) continue;
      const spend = await getJson<Spend>(this.store, key);
      others.usd += spend?.usd ?? 0;
      others.requests += spend?.requests ?? 0;
    }
    this.others = others;
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
