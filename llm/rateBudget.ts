/**
 * One budget of an endpoint, requests or tokens per minute, as two token buckets: pacing, at the
 * tighter of the configured rate and the provider's announced x-ratelimit-limit-*, holding one
 * second's worth, not a minute's (providers enforce limits over shorter periods too; OpenAI: "60,000
 * requests/minute may be enforced as 1,000 requests/second"); and a mirror of the provider's own
 * bucket from its last x-ratelimit-remaining-* / reset-*, which binds only when someone else spends
 * the same key or the provider's window is not a minute (Groq's requests-per-day). A cost larger
 * than a bucket holds passes when the bucket is full and leaves it in debt, which paces what follows.
 */
import type { BudgetReport } from './rateLimitHeaders.js';

const MINUTE_MS = 60_000;
/** How far back a budget's use is measured, for the rate lease's demand (llm/concurrencyLeases.ts rateDemand). */
const USE_WINDOW_S = 5;

export class RateBucket {
  constructor(
    readonly capacity: number,
    readonly perMs: number,
    private level: number,
    private updatedAt: number,
  ) {}

  levelAt(now: number): number {
    this.refill(now);
    return this.level;
  }

  /** Milliseconds until `cost` (at most a full bucket) is available; 0 means now. */
  waitMs(cost: number, now: number): number {
    this.refill(now);
    const missing = Math.min(cost, this.capacity) - this.level;
    return missing <= 0 ? 0 : missing / this.perMs;
  }

  /** Negative amounts give back (a request that used fewer tokens than estimated). */
  take(amount: number, now: number): void {
    this.refill(now);
    this.level = Math.min(this.capacity, this.level - amount);
  }

  private refill(now: number): void {
    this.level = Math.min(this.capacity, this.level + (now - this.updatedAt) * this.perMs);
    this.updatedAt = now;
  }
}

/** What was spent per second over the last USE_WINDOW_S seconds. */
class RecentUse {
  private readonly seconds: Array<{ second: number; amount: number }> = [];

  add(amount: number, now: number): void {
    const second = Math.floor(now / 1000);
    const last = this.seconds.at(-1);
    if (last?.second === second) last.amount += amount;
    else this.seconds.push({ second, amount });
    this.forget(second);
  }

  perMinute(now: number): number {
    this.forget(Math.floor(now / 1000));
    return (this.seconds.reduce((n, s) => n + s.amount, 0) * 60) / USE_WINDOW_S;
  }

  private forget(second: number): void {
    while (this.seconds.length > 0 && this.seconds[0]!.second <= second - USE_WINDOW_S) this.seconds.shift();
  }
}

export class RateBudget {
  private configured: number | undefined;
  private announced: number | undefined;
  /** Worker processes pacing against the same limit; this one paces at 1/workers of it (unless leased). */
  private workers = 1;
  /** This worker's lease of the limit, per minute (the lease workflow's grant); undefined: the 1/workers share. */
  private leased: number | undefined;
  private readonly used = new RecentUse();
  private pacing: RateBucket | undefined;
  private provider: RateBucket | undefined;

  constructor(perMinute: number | undefined, now: number) {
    this.configured = perMinute;
    this.repace(now);
  }

  /** The limit for all workers together: the tightest of what was configured and what the provider announced. */
  get limit(): number | undefined {
    const known = [this.configured, this.announced].filter((n): n is number => n !== undefined);
    return known.length > 0 ? Math.min(...known) : undefined;
  }

  /** Per minute for this worker: its lease of the limit, or else its 1/workers share. */
  get perMinute(): number | undefined {
    const limit = this.limit;
    if (limit === undefined) return undefined;
    return this.leased === undefined ? limit / this.workers : Math.min(this.leased, limit);
  }

  /** This worker's lease of the limit, per minute; undefined ends leasing (the 1/workers share applies). 0 admits nothing. */
  lease(perMinute: number | undefined, now: number): void {
    if (perMinute === this.leased) return;
    this.leased = perMinute;
    this.repace(now);
  }

  /** What this worker spent per minute lately (the rate lease's demand). */
  usedPerMinute(now: number): number {
    return this.used.perMinute(now);
  }

  /** The mirror of the provider's bucket stays whole: its remaining count already covers every worker. */
  share(workers: number, now: number): void {
    if (workers === this.workers) return;
    this.workers = workers;
    this.repace(now);
  }

  /** The configured limit (EndpointLimiter passes the tightest of the builds using the endpoint now). */
  configure(perMinute: number | undefined, now: number): void {
    if (perMinute === this.configured) return;
    this.configured = perMinute;
    this.repace(now);
  }

  learn(report: BudgetReport, now: number): void {
    const { limit, remaining, resetMs } = report;
    if (limit !== undefined && limit > 0 && limit !== this.announced) {
      this.announced = limit;
      this.repace(now);
    }
    if (limit === undefined || remaining === undefined) return;
    // No reset, or nothing spent: the provider refills over its (per-minute) limit.
    const perMs = resetMs !== undefined && resetMs > 0 && remaining < limit ? (limit - remaining) / resetMs : limit / MINUTE_MS;
    this.provider = new RateBucket(limit, perMs, remaining, now);
  }

  /** Milliseconds until `cost` may be spent; infinite under a lease of 0 (a new lease pumps). */
  waitMs(cost: number, now: number): number {
    if (this.perMinute === 0) return Number.POSITIVE_INFINITY;
    return Math.max(this.pacing?.waitMs(cost, now) ?? 0, this.provider?.waitMs(cost, now) ?? 0);
  }

  take(amount: number, now: number): void {
    this.used.add(amount, now);
    this.pacing?.take(amount, now);
    this.provider?.take(amount, now);
  }

  /** Corrects an estimate once the real amount is known; the provider's mirror is resynced by its next headers. */
  correct(estimated: number, actual: number, now: number): void {
    this.used.add(actual - estimated, now);
    this.pacing?.take(actual - estimated, now);
  }

  /** A new rate keeps what the old bucket held (debt included); the first starts full, as at start-up. */
  private repace(now: number): void {
    const perMinute = this.perMinute;
    if (perMinute === undefined) return;
    const perMs = perMinute / MINUTE_MS;
    const capacity = Math.max(1, perMs * 1000);
    this.pacing = new RateBucket(capacity, perMs, Math.min(capacity, this.pacing?.levelAt(now) ?? capacity), now);
  }
}
