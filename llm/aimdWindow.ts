/**
 * The AIMD window of an endpoint: how many requests may be in flight below its cap. It starts at
 * the cap; a 429 halves it (not below 1), each success adds 1/window (so +1 per window's worth of
 * successes) back up to the cap. Halving happens once per congestion event: 429s of requests
 * admitted before the last halving were caused by the old window and would otherwise collapse it
 * to 1 in one burst.
 */

/** Without a Retry-After: 1 s, doubling per congestion event without a success in between, at most 30 s. */
const DEFAULT_PAUSE_MS = 1000;
const MAX_DEFAULT_PAUSE_MS = 30_000;

export class AimdWindow {
  /** Requests in flight allowed, fractional (additive growth adds fractions). */
  size: number;
  /** Bumped by each halving; a 429 halves only when its request was admitted in the current epoch. */
  epoch = 0;
  /** Congestion events since the last success, for the default pause. */
  private strikes = 0;

  constructor(public cap: number) {
    this.size = cap;
  }

  /** A new cap; the window keeps its place relative to the cap, so it follows at once instead of via 429s or additive growth. */
  rescale(cap: number): void {
    if (cap === this.cap) return;
    this.size = Math.min(cap, Math.max(1, (this.size * cap) / this.cap));
    this.cap = cap;
  }

  succeeded(): void {
    this.strikes = 0;
    this.size = Math.min(this.cap, this.size + 1 / this.size);
  }

  /** A 429 of a request admitted in `admittedIn`; `grant`: this worker's lease, under which the window is halved. */
  congested(admittedIn: number, grant: number | undefined): void {
    if (admittedIn !== this.epoch) return;
    this.epoch++;
    this.strikes++;
    // Half of what was allowed: under a lease smaller than the window, the lease.
    this.size = Math.max(1, Math.min(this.size, grant ?? this.size) / 2);
  }

  /** How long to pause the endpoint after a 429 that named no Retry-After. */
  defaultPauseMs(): number {
    return Math.min(MAX_DEFAULT_PAUSE_MS, DEFAULT_PAUSE_MS * 2 ** Math.max(0, this.strikes - 1));
  }
}
