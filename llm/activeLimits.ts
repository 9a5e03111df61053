/**
 * Several configurations may name one endpoint (stages, builds): the tightest limits among the
 * requests waiting or in flight apply, so one build's low cap stops applying once its requests are
 * done instead of holding every later build of this worker to it.
 */
import type { EndpointLimits } from './endpointLimits.js';

export class ActiveLimits {
  /** The limits of the requests waiting or in flight, by value, with how many requests hold each. */
  private readonly held = new Map<string, { limits: EndpointLimits; active: number }>();

  /** `changed` runs when the set of limits held changes while requests still hold some. */
  constructor(private readonly changed: () => void) {}

  /** Holds `limits` for one request; the function returned lets go of them. */
  hold(limits: EndpointLimits): () => void {
    const id = `${limits.concurrency}/${limits.requestsPerMinute}/${limits.tokensPerMinute}/${limits.attemptTimeoutMs}/${limits.maxWaitMs}`;
    let entry = this.held.get(id);
    // Only a change in the set of limits held changes the tightest ones: most requests share an
    // entry already held and reconfigure nothing (this runs twice per request).
    if (entry) entry.active++;
    else {
      entry = { limits, active: 1 };
      this.held.set(id, entry);
      this.changed();
    }
    const held = entry;
    return () => {
      if (--held.active > 0) return;
      this.held.delete(id);
      // Idle: nothing to reconfigure for; the next request's limits apply when it holds them.
      if (this.held.size > 0) this.changed();
    };
  }

  /** The tightest of each limit held now (called while at least one request holds some), and the longest attempt timeout. */
  tightest(): EndpointLimits {
    const active = [...this.held.values()].map((c) => c.limits);
    const pickOf = (pick: (l: EndpointLimits) => number | undefined, better: (a: number, b: number) => number) =>
      active.map(pick).reduce<number | undefined>((best, n) => (n === undefined ? best : best === undefined ? n : better(best, n)), undefined);
    const least = (pick: (l: EndpointLimits) => number | undefined) => pickOf(pick, Math.min);
    const tightest: EndpointLimits = {
      concurrency: least((l) => l.concurrency)!,
      requestsPerMinute: least((l) => l.requestsPerMinute),
      tokensPerMinute: least((l) => l.tokensPerMinute),
      maxWaitMs: least((l) => l.maxWaitMs),
    };
    const longest = pickOf((l) => l.attemptTimeoutMs, Math.max);
    return longest === undefined ? tightest : { ...tightest, attemptTimeoutMs: longest };
  }
}
