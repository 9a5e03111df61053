/**
 * Admission control for one endpoint in one worker process. A request is admitted, in FIFO order
 * (admissionQueue.ts), when fewer requests are in flight than the AIMD window allows (aimdWindow.ts)
 * within this worker's share of the endpoint's concurrency, the endpoint is not paused (a 429 pauses
 * it for its Retry-After, or a doubling default), and the per-minute request and token budgets allow
 * it (rateBudget.ts; tokens estimated before the call, corrected from `usage` after it). The workers
 * of a task queue divide the concurrency and rates by demand, by leases (`lease`, `leaseRates`,
 * `leaseThrough`; llm/concurrencyLeases.ts) or 1/N where none is to be had (`share`); the provider's
 * remaining-budget headers stay unshared. Waiting uses one timer per limiter, never polling.
 */
import { AdmissionQueue } from './admissionQueue.js';
import { AimdWindow } from './aimdWindow.js';
import { runInSlot, Slot } from './attemptSlot.js';
import { systemClock, type Clock } from './clock.js';
import { ActiveLimits } from './activeLimits.js';
import type { EndpointLimits } from './endpointLimits.js';
import { RateBudget } from './rateBudget.js';
import { readRateLimitHeaders, retryAfterMs, type BudgetReport, type HeaderSource } from './rateLimitHeaders.js';

/** How an attempt went, told by the code that made the HTTP call. */
export interface Ticket {
  /** A 2xx: learn the provider's limits, replace the token estimate by the real count, widen the window. */
  succeeded(headers: HeaderSource | undefined, tokensUsed: number | undefined): void;
  /** A 429: learn the provider's limits, halve the window, pause the endpoint (for its Retry-After, within `maxWaitMs`). */
  rateLimited(headers: HeaderSource | undefined): void;
}

export interface LimiterSnapshot {
  /** Worker processes sharing the endpoint; the figures below are this worker's share. */
  workers: number;
  /** The requests this worker may have in flight: its lease, or 1/workers of the configured cap. */
  concurrency: number;
  /** Whether `concurrency` is a lease (demand-aware) rather than the 1/workers split. */
  leased: boolean;
  window: number;
  inFlight: number;
  queued: number;
  pausedForMs: number;
  requestsPerMinute: number | undefined;
  tokensPerMinute: number | undefined;
}

/** The per-minute limits, as the lease workflow knows them (an endpoint's entry id + `/rpm`, `/tpm`). */
export type RateKind = 'rpm' | 'tpm';
const RATE_KINDS: readonly RateKind[] = ['rpm', 'tpm'];

export interface LimiterOptions {
  /** Worker processes sharing the endpoint (1/workers of its limits applies until leased). */
  workers?: number;
  /** Lease the endpoint's limits (see leaseThrough). */
  leaseWanted?: () => void;
  clock?: Clock;
}

export class EndpointLimiter {
  /** The configured concurrency, for all workers together. */
  private configuredCap: number;
  /** The longest attempt timeout among the configurations held (the lease desk's drainMs). */
  private attemptTimeoutMs: number | undefined;
  private maxWaitMs: number;
  private workers = 1;
  /** Requests in flight this worker's lease allows (0 while it waits for one); undefined = no lease, the 1/workers share applies. */
  private grant: number | undefined;
  /** Called when requests wait for a lease this worker does not hold yet (an idle worker becoming busy). */
  private wantLease: () => void = () => {};
  /** The AIMD window; its cap is the configured cap when leased, else this worker's 1/workers share of it. */
  private readonly window: AimdWindow;
  private inFlight = 0;
  private pausedUntil = 0;
  private readonly requests: RateBudget;
  private readonly tokens: RateBudget;
  private readonly queue = new AdmissionQueue((joined) => {
    if (joined && this.grant === 0) this.wantLease();
    this.pump();
  });
  private readonly active = new ActiveLimits(() => this.configure());
  private readonly clock: Clock;
  private cancelTimer: (() => void) | undefined;
  private timerAt = Number.POSITIVE_INFINITY;

  constructor(
    private readonly initial: EndpointLimits,
    options: LimiterOptions = {},
  ) {
    this.clock = options.clock ?? systemClock;
    const now = this.clock.now();
    this.configuredCap = initial.concurrency;
    this.attemptTimeoutMs = initial.attemptTimeoutMs;
    this.maxWaitMs = initial.maxWaitMs ?? Number.POSITIVE_INFINITY;
    this.window = new AimdWindow(initial.concurrency);
    this.requests = new RateBudget(initial.requestsPerMinute, now);
    this.tokens = new RateBudget(initial.tokensPerMinute, now);
    this.share(options.workers ?? 1);
    if (options.leaseWanted) this.leaseThrough(options.leaseWanted);
  }

  private configure(): void {
    const tightest = this.active.tightest();
    const now = this.clock.now();
    this.configuredCap = tightest.concurrency;
    this.attemptTimeoutMs = tightest.attemptTimeoutMs;
    this.maxWaitMs = tightest.maxWaitMs ?? Number.POSITIVE_INFINITY;
    this.window.rescale(this.ceiling());
    this.requests.configure(tightest.requestsPerMinute, now);
    this.tokens.configure(tightest.tokensPerMinute, now);
    this.pump();
  }

  /**
   * `workers` processes share this endpoint: admit 1/workers of its concurrency and rates. The
   * window keeps its place relative to the cap, so a worker that joins or leaves moves every
   * window at once instead of waiting for 429s or additive growth.
   */
  share(workers: number): void {
    if (!(workers >= 1) || workers === this.workers) return;
    this.workers = workers;
    this.window.rescale(this.ceiling());
    const now = this.clock.now();
    this.requests.share(workers, now);
    this.tokens.share(workers, now);
    this.pump();
  }

  /**
   * This worker's lease of the endpoint's concurrency (the endpointLeases workflow's grant): at most
   * `grant` requests in flight, whatever 1/workers would be; undefined ends leasing (the 1/workers
   * share applies again, e.g. when the workflow cannot be reached).
   */
  lease(grant: number | undefined): void {
    this.grant = grant === undefined ? undefined : Math.max(0, Math.floor(grant));
    this.window.rescale(this.ceiling());
    if (this.grant === 0 && this.queue.length > 0) this.wantLease();
    this.pump();
  }

  /**
   * This worker's leases of the per-minute rates (the endpointLeases workflow's grants, per minute):
   * a rate without a grant keeps its lease; undefined ends leasing them all (the 1/workers share
   * applies again); 0 admits nothing.
   */
  leaseRates(grants: Partial<Record<RateKind, number>> | undefined): void {
    const now = this.clock.now();
    for (const kind of RATE_KINDS) if (grants === undefined || grants[kind] !== undefined) this.budget(kind).lease(grants?.[kind], now);
    this.pump();
  }

  private budget(kind: RateKind): RateBudget {
    return kind === 'rpm' ? this.requests : this.tokens;
  }

  /**
   * Starts leasing: nothing is admitted until the first grant; `wanted` is called whenever requests
   * wait with no lease held, so the lease is asked for at once. Undefined stops leasing.
   */
  leaseThrough(wanted: (() => void) | undefined): void {
    this.wantLease = wanted ?? (() => {});
    this.holdLeases(wanted ? 0 : undefined);
  }

  /** The concurrency and every rate at once: 0 holds no lease (requests wait for one); undefined stops leasing (1/N). */
  holdLeases(grant: 0 | undefined): void {
    this.lease(grant);
    this.leaseRates(grant === 0 ? { rpm: 0, tpm: 0 } : undefined);
  }

  /** The per-minute limits known here (configured or announced), each with this worker's use and pace, for the lease workflow. */
  rateDemands(): Array<{ kind: RateKind; limit: number; used: number; waiting: boolean; holding: number }> {
    const now = this.clock.now();
    // Requests wait at a rate when the head of the line could go but for its budget.
    const head = this.inFlight < this.admissible() ? this.queue.head() : undefined;
    return RATE_KINDS.flatMap((kind) => {
      const budget = this.budget(kind);
      const limit = budget.limit;
      if (limit === undefined) return [];
      const waiting = head !== undefined && budget.waitMs(kind === 'rpm' ? 1 : head.tokens, now) > 0;
      return [{ kind, limit, used: budget.usedPerMinute(now), waiting, holding: budget.perMinute ?? 0 }];
    });
  }

  /** What the lease workflow needs to know of this endpoint here (llm/concurrencyLeases.ts EndpointDemand, less its identity). */
  demand(): { cap: number; inFlight: number; queued: number; holding: number; drainMs?: number } {
    const demand = { cap: this.configuredCap, inFlight: this.inFlight, queued: this.queue.length, holding: this.grant ?? shareOf(this.configuredCap, this.workers) };
    return this.attemptTimeoutMs === undefined ? demand : { ...demand, drainMs: this.attemptTimeoutMs };
  }

  private ceiling(): number {
    return this.grant === undefined ? shareOf(this.configuredCap, this.workers) : this.configuredCap;
  }

  /** Requests in flight allowed now: the AIMD window within the lease. */
  private admissible(): number {
    return Math.min(Math.floor(this.window.size), this.grant ?? Number.POSITIVE_INFINITY);
  }

  /** A place in line; pass it to every attempt of one request so retries are not sent to the back. */
  place(): number {
    return this.queue.place();
  }

  /**
   * Waits for admission, runs `attempt` and releases its slot however it ends, or earlier: as soon
   * as a 2xx reply has arrived, when the attempt fetches with httpFetch (AttemptSlot). `limits`: those of
   * the configuration making the request (see ActiveLimits); the constructor's otherwise.
   */
  async run<T>(estimatedTokens: number, attempt: (ticket: Ticket) => Promise<T>, place = this.place(), limits = this.initial, signal?: AbortSignal): Promise<T> {
    const release = this.active.hold(limits);
    try {
      return await this.admitted(estimatedTokens, attempt, place, signal);
    } finally {
      release();
    }
  }

  private async admitted<T>(estimatedTokens: number, attempt: (ticket: Ticket) => Promise<T>, place: number, signal: AbortSignal | undefined): Promise<T> {
    const epoch = await this.queue.wait(place, estimatedTokens, signal);
    const slot = new Slot(
      () => {
        this.inFlight--;
        this.pump();
      },
      (headers) => this.learn(headers, this.clock.now()),
    );
    const ticket: Ticket = {
      succeeded: (headers, tokensUsed) => {
        const now = this.clock.now();
        // Learnt once: the slot learns them when the reply arrives (a second reading would forget the requests admitted since).
        if (headers && !slot.learned) this.learn(headers, now);
        if (tokensUsed !== undefined) this.tokens.correct(estimatedTokens, tokensUsed, now);
        this.window.succeeded();
      },
      rateLimited: (headers) => {
        const now = this.clock.now();
        if (headers) this.learn(headers, now);
        this.window.congested(epoch, this.grant);
        const pause = Math.min(retryAfterMs(headers, now) ?? this.window.defaultPauseMs(), this.maxWaitMs);
        this.pausedUntil = Math.max(this.pausedUntil, now + pause);
      },
    };
    try {
      return await runInSlot(slot, () => attempt(ticket));
    } finally {
      slot.release();
    }
  }

  snapshot(): LimiterSnapshot {
    return {
      workers: this.workers,
      concurrency: Math.min(this.window.cap, this.grant ?? this.window.cap),
      leased: this.grant !== undefined,
      window: this.window.size,
      inFlight: this.inFlight,
      queued: this.queue.length,
      pausedForMs: Math.max(0, this.pausedUntil - this.clock.now()),
      requestsPerMinute: this.requests.perMinute,
      tokensPerMinute: this.tokens.perMinute,
    };
  }

  private learn(headers: HeaderSource, now: number): void {
    const report = readRateLimitHeaders(headers);
    // A reset further off than the bound is waited for no longer than the bound.
    const bounded = (budget: BudgetReport): BudgetReport => (budget.resetMs !== undefined && budget.resetMs > this.maxWaitMs ? { ...budget, resetMs: this.maxWaitMs } : budget);
    this.requests.learn(bounded(report.requests), now);
    this.tokens.learn(bounded(report.tokens), now);
  }

  /** Admits from the head while it fits; otherwise a release or the one timer calls again. No timer is kept while nothing waits. */
  private pump(): void {
    if (this.queue.length === 0) this.cancelWake();
    for (let head = this.queue.head(); head; head = this.queue.head()) {
      if (this.inFlight >= this.admissible()) return;
      const now = this.clock.now();
      const wait = Math.max(this.pausedUntil - now, this.requests.waitMs(1, now), this.tokens.waitMs(head.tokens, now));
      // A rate leased at 0: nothing to wait for but a lease (asked for; a grant pumps).
      if (wait === Number.POSITIVE_INFINITY) return this.wantLease();
      if (wait > 0) return this.wakeIn(wait, now);
      this.queue.shift();
      this.inFlight++;
      this.requests.take(1, now);
      this.tokens.take(head.tokens, now);
      head.admit(this.window.epoch);
    }
  }

  private cancelWake(): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
  }

  private wakeIn(ms: number, now: number): void {
    const at = now + ms;
    if (this.cancelTimer && this.timerAt <= at) return;
    this.cancelWake();
    this.timerAt = at;
    this.cancelTimer = this.clock.setTimer(() => {
      this.cancelTimer = undefined;
      this.timerAt = Number.POSITIVE_INFINITY;
      this.pump();
    }, Math.ceil(ms));
  }
}

/** A worker's part of a limit shared by `workers`: at least 1, so every worker makes progress. */
function shareOf(limit: number, workers: number): number {
  return Math.max(1, Math.floor(limit / workers));
}
