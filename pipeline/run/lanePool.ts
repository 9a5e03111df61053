/**
 * A worker's sample lanes for one build (docs/architecture.md, glossary: lane): a sample takes a lane
 * before its first stage and gives it back after its last, and the next waiting sample of any slice
 * or shard takes it the moment it is free, so the endpoint's slots stay filled through slice and
 * shard tails (docs/adr/0015-four-sample-lanes-per-endpoint-slot.md). Waiting samples go in `order`
 * (the slice activity's first schedule time, its shard, the sample's place): the oldest shards first,
 * so shards end and commit about in the order they started (domain/commitOrder.ts). A waiting sample
 * holds only its plan entry (no image bytes), and an abort takes it out of line at once.
 */

/** A sample's place in line: compared element by element, lowest first; ties go by arrival. */
export type LaneOrder = readonly number[];

interface Waiting {
  order: LaneOrder;
  arrival: number;
  take: () => void;
}

export class LanePool {
  private size: number;
  private busy = 0;
  /** Sorted by (order, arrival). */
  private readonly line: Waiting[] = [];
  private arrivals = 0;

  constructor(size: number) {
    this.size = lanesAtLeastOne(size);
  }

  /** Samples holding a lane. */
  get inUse(): number {
    return this.busy;
  }

  /** Samples waiting for one. */
  get waiting(): number {
    return this.line.length;
  }

  get lanes(): number {
    return this.size;
  }

  /**
   * Where the samples whose order starts with `prefix` (a slice's: SliceLanes.order) stand in line:
   * how many other samples wait ahead of the first of them, and how many of them still wait. Either
   * going down is the slice moving towards its lanes (its no-progress watchdog counts it).
   */
  place(prefix: LaneOrder): { ahead: number; waiting: number } {
    const ahead = this.countBefore({ order: prefix, arrival: Number.NEGATIVE_INFINITY });
    const through = this.countBefore({ order: [...prefix, Number.POSITIVE_INFINITY], arrival: Number.POSITIVE_INFINITY });
    return { ahead, waiting: through - ahead };
  }

  /** Sets the number of lanes (the endpoints' share of this worker changed): more lanes admit waiting samples at once; fewer let those running end first. */
  resize(size: number): void {
    this.size = lanesAtLeastOne(size);
    this.pump();
  }

  /**
   * Waits for a lane in `order`; resolves to its release (idempotent: call it however the sample
   * ended). Rejects with the abort reason, leaving the line at once, when `signal` aborts first.
   */
  acquire(order: LaneOrder, signal?: AbortSignal): Promise<() => void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => {
        const at = this.line.indexOf(waiter);
        if (at < 0) return; // already holds a lane: its sample's own calls see the abort
        this.line.splice(at, 1);
        reject(signal!.reason);
      };
      const waiter: Waiting = {
        order,
        arrival: this.arrivals++,
        take: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(this.release());
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.line.splice(this.countBefore(waiter), 0, waiter);
      this.pump();
    });
  }

  /** A release for a lane just taken: frees it once, then lets the next waiting sample in. */
  private release(): () => void {
    this.busy += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.busy -= 1;
      this.pump();
    };
  }

  private pump(): void {
    while (this.busy < this.size && this.line.length > 0) this.line.shift()!.take();
  }

  /** Waiting samples that go before `waiter`: where it goes in the sorted line (binary search: the line can hold thousands of samples). */
  private countBefore(waiter: Pick<Waiting, 'order' | 'arrival'>): number {
    let low = 0;
    let high = this.line.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (before(this.line[mid]!, waiter)) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}

function before(a: Pick<Waiting, 'order' | 'arrival'>, b: Pick<Waiting, 'order' | 'arrival'>): boolean {
  const n = Math.max(a.order.length, b.order.length);
  for (let i = 0; i < n; i++) {
    const x = a.order[i] ?? Number.NEGATIVE_INFINITY;
    const y = b.order[i] ?? Number.NEGATIVE_INFINITY;
    if (x !== y) return x < y;
  }
  return a.arrival < b.arrival;
}

function lanesAtLeastOne(size: number): number {
  if (!(size >= 1)) throw new Error(`a lane pool needs at least one lane, not ${size}`);
  return Math.floor(size);
}
