/**
 * Provider-side rate limits with OpenAI's semantics, so clients can be tested against them: a
 * request budget and a token budget per minute, each a bucket holding the full limit and refilled
 * continuously (limit / 60 s). A request is charged its prompt tokens plus its max_tokens, as
 * OpenAI estimates before generating. Every answer reports both budgets in x-ratelimit-* headers.
 */

interface RateLimitSettings {
  /** Per minute; 0 = unlimited (and no headers for that budget). */
  rateLimitRequests: number;
  rateLimitTokens: number;
}

export interface Admission {
  ok: boolean;
  headers: Record<string, string>;
}

const MINUTE_MS = 60_000;

class MinuteBucket {
  private limit = 0;
  private level = 0;
  private updatedAt = 0;

  /** Refills up to now; a changed limit starts again from a full bucket. */
  refill(limit: number, now: number): void {
    if (limit !== this.limit) {
      this.limit = limit;
      this.level = limit;
    } else {
      this.level = Math.min(limit, this.level + ((now - this.updatedAt) * limit) / MINUTE_MS);
    }
    this.updatedAt = now;
  }

  has(cost: number): boolean {
    return this.limit === 0 || this.level >= cost;
  }

  take(cost: number): void {
    if (this.limit > 0) this.level -= cost;
  }

  headers(name: 'requests' | 'tokens'): Record<string, string> {
    if (this.limit === 0) return {};
    return {
      [`x-ratelimit-limit-${name}`]: String(this.limit),
      [`x-ratelimit-remaining-${name}`]: String(Math.max(0, Math.floor(this.level))),
      [`x-ratelimit-reset-${name}`]: formatDuration(((this.limit - this.level) * MINUTE_MS) / this.limit),
    };
  }
}

export class ProviderRateLimits {
  private readonly requests = new MinuteBucket();
  private readonly tokens = new MinuteBucket();

  /** Charges one request of `tokens` when both budgets allow it; headers describe the budgets after. */
  admit(settings: RateLimitSettings, tokens: number, now = Date.now()): Admission {
    this.requests.refill(settings.rateLimitRequests, now);
    this.tokens.refill(settings.rateLimitTokens, now);
    const ok = this.requests.has(1) && this.tokens.has(tokens);
    if (ok) {
      this.requests.take(1);
      this.tokens.take(tokens);
    }
    return { ok, headers: { ...this.requests.headers('requests'), ...this.tokens.headers('tokens') } };
  }
}

/** Go's duration format, which OpenAI uses: `20ms`, `1.5s`, `6m0s`, `1h2m0s`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const hours = Math.floor(ms / 3_600_000);
  const minutes = Math.floor((ms % 3_600_000) / MINUTE_MS);
  const seconds = Number(((ms % MINUTE_MS) / 1000).toFixed(3));
  return `${hours ? `${hours}h` : ''}${hours || minutes ? `${minutes}m` : ''}${seconds}s`;
}
