/**
 * Several configurations may name one endpoint (stages, builds): the tightest limits among the
 * requests waiting or in flight apply, so one build's low cap stops applying once its requests are
 * done instead of holding every later build of this worker to it.
 */
import type { EndpointLimits } from './endpointLimiter.js';

export class LimitClaims {
  /** The limits of the requests waiting or in flight, by value, with how many requests claim each. */
  private readonly claims = new Map<string, { limits: EndpointLimits; active: number }>();

  /** `changed` runs when the set of limits claimed changes while requests still claim some. */
  constructor(private readonly changed: () => void) {}

  /** Claims `limits` for one request; the function returned ends the claim. */
  claim(limits: EndpointLimits): () => void {
    const id = `${limits.concurrency}/${limits.requestsPerMinute}/${limits.tokensPerMinute}`;
    let entry = this.claims.get(id);
    // Only a change in the set of limits claimed changes the tightest ones: most requests share an
    // entry already claimed and reconfigure nothing (this runs twice per request).
    if (entry) entry.active++;
    else {
      entry = { limits, active: 1 };
      this.claims.set(id, entry);
      this.changed();
    }
    const claimed = entry;
    return () => {
      if (--claimed.active > 0) return;
      this.claims.delete(id);
      // Idle: nothing to reconfigure for; the next request's limits apply when it claims.
      if (this.claims.size > 0) this.changed();
    };
  }

  /** The tightest of each limit claimed now (called while at least one claim is held). */
  tightest(): EndpointLimits {
    const active = [...this.claims.values()].map((c) => c.limits);
    const least = (pick: (l: EndpointLimits) => number | undefined) =>
      active.map(pick).reduce<number | undefined>((min, n) => (n === undefined ? min : min === undefined ? n : Math.min(min, n)), undefined);
    return { concurrency: least((l) => l.concurrency)!, requestsPerMinute: least((l) => l.requestsPerMinute), tokensPerMinute: least((l) => l.tokensPerMinute) };
  }
}
