/**
 * The line of requests waiting for admission to an endpoint, in strict FIFO order by place: no
 * starvation, a large request at the head is not overtaken by small ones, and a retry keeps its
 * place (`place()` once per request, reused for each attempt).
 */

export interface Waiter {
  place: number;
  /** Estimated tokens, charged to the token budget on admission. */
  tokens: number;
  /** Admits it; `epoch`: the AIMD window's epoch at admission. */
  admit(epoch: number): void;
}

export class AdmissionQueue {
  private readonly waiters: Waiter[] = [];
  private nextPlace = 0;

  /** `changed` runs after a request joins (`joined`) or leaves the line (the limiter admits what now fits). */
  constructor(private readonly changed: (joined: boolean) => void) {}

  get length(): number {
    return this.waiters.length;
  }

  head(): Waiter | undefined {
    return this.waiters[0];
  }

  /** Takes the head out of line: it is being admitted. */
  shift(): void {
    this.waiters.shift();
  }

  /** A place in line; pass it to every attempt of one request so retries are not sent to the back. */
  place(): number {
    return this.nextPlace++;
  }

  /**
   * Waits in line until admitted, resolving to the window's epoch at admission. An abort
   * (cancelled activity, stopping worker) leaves the line at once: a paused endpoint (Retry-After)
   * or a spent budget can hold a request for minutes.
   */
  wait(place: number, tokens: number, signal: AbortSignal | undefined): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => {
        const at = this.waiters.indexOf(waiter);
        if (at < 0) return; // already admitted
        this.waiters.splice(at, 1);
        this.changed(false);
        reject(signal!.reason);
      };
      const waiter: Waiter = {
        place,
        tokens,
        admit: (epoch) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(epoch);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      let at = this.waiters.length;
      while (at > 0 && this.waiters[at - 1]!.place > place) at--;
      this.waiters.splice(at, 0, waiter);
      this.changed(true);
    });
  }
}
