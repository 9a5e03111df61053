/**
 * Admission control per endpoint, shared by every activity of a worker process (limiterFor keeps
 * one limiter per endpoint in a module-level registry). An endpoint is a base URL + model + API
 * key: providers count limits per organisation/project key and per model, so two stages on one
 * model share a limiter, and the same model under two keys does not.
 *
 * A request is admitted when, in FIFO order:
 * - fewer than `window` requests are in flight. The window starts at the configured concurrency
 *   and follows AIMD: a 429 halves it (not below 1), each success adds 1/window (so +1 per
 *   window's worth of successes) back up to the cap. Halving happens once per congestion event:
 *   429s of requests admitted before the last halving were caused by the old window and would
 *   otherwise collapse it to 1 in one burst;
 * - the endpoint is not paused: a 429 pauses it for its Retry-After (or a doubling default);
 * - the request and token budgets allow it (rateBudget.ts): configured and learned per-minute
 *   limits. Tokens are estimated before the call and corrected from `usage` after it.
 *
 * Limits are per endpoint, not per worker: the N workers polling one task queue divide the
 * concurrency cap and the per-minute rates by demand: a worker's leases of them, granted by the
 * endpointLeases workflow (leaseConcurrency; llm/concurrencyLeases.ts), or 1/N of them where no
 * lease is to be had (shareEndpointsAmong, fed by the worker's count of live pollers,
 * worker/endpointSharing.ts). So N workers hold the endpoint at its limit without a hand-split cap. The
 * provider's own remaining-budget headers are global and stay unshared.
 *
 * Strict FIFO means no starvation: a large request at the head is not overtaken by small ones.
 * Retries keep their place in line (`place()` once per request, reused for each attempt).
 * Waiting uses one timer per limiter and release events, never polling.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import diagnosticsChannel from 'node:diagnostics_channel';
import type { ResolvedEndpoint } from './endpoint.js';
import { rateDemand, type EndpointDemand } from './concurrencyLeases.js';
import { RateBudget } from './rateBudget.js';
import { readRateLimitHeaders, retryAfterMs, type HeaderSource } from './rateLimitHeaders.js';

export interface EndpointLimits {
  /** Requests in flight at most (the AIMD cap). */
  concurrency: number;
  requestsPerMinute?: number;
  tokensPerMinute?: number;
}

export const DEFAULT_CONCURRENCY = 16;

/** How an attempt went, told by the code that made the HTTP call. */
export interface Ticket {
  /** A 2xx: learn the provider's limits, replace the token estimate by the real count, widen the window. */
  succeeded(headers: HeaderSource | undefined, tokensUsed: number | undefined): void;
  /** A 429: learn the provider's limits, halve the window, pause the endpoint. */
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

/** Without a Retry-After: 1 s, doubling per congestion event without a success in between, at most 30 s. */
const DEFAULT_PAUSE_MS = 1000;
const MAX_DEFAULT_PAUSE_MS = 30_000;

interface Waiter {
  place: number;
  tokens: number;
  admit: (epoch: number) => void;
}

export class EndpointLimiter {
  /** The configured concurrency, for all workers together. */
  private configuredCap: number;
  /** The AIMD window's ceiling: the configured cap when leased, else this worker's 1/workers share of it. */
  private cap: number;
  private workers = 1;
  /** Requests in flight this worker's lease allows (0 while it waits for one); undefined = no lease, the 1/workers share applies. */
  private grant: number | undefined;
  /** Called when requests wait for a lease this worker does not hold yet (an idle worker becoming busy). */
  private wantLease: () => void = () => {};
  private window: number;
  private inFlight = 0;
  private pausedUntil = 0;
  /** Bumped by each halving; a 429 halves only when its request was admitted in the current epoch. */
  private epoch = 0;
  /** Congestion events since the last success, for the default pause. */
  private strikes = 0;
  private readonly requests: RateBudget;
  private readonly tokens: RateBudget;
  private readonly queue: Waiter[] = [];
  private nextPlace = 0;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  /** The limits of the requests waiting or in flight, by value, with how many requests claim each. */
  private readonly claims = new Map<string, { limits: EndpointLimits; active: number }>();

  constructor(private readonly initial: EndpointLimits, workers = 1, leaseWanted?: () => void) {
    const limits = initial;
    this.configuredCap = limits.concurrency;
    this.cap = limits.concurrency;
    this.window = limits.concurrency;
    this.requests = new RateBudget(limits.requestsPerMinute, Date.now());
    this.tokens = new RateBudget(limits.tokensPerMinute, Date.now());
    this.share(workers);
    if (leaseWanted) this.leaseThrough(leaseWanted);
  }

  /**
   * Several configurations may name one endpoint (stages, builds): the tightest limits among the
   * requests waiting or in flight apply, so one build's low cap stops applying once its requests are
   * done instead of holding every later build of this worker to it. `run` claims for each request.
   */
  private claim(limits: EndpointLimits): () => void {
    const id = `${limits.concurrency}/${limits.requestsPerMinute}/${limits.tokensPerMinute}`;
    let entry = this.claims.get(id);
    // Only a change in the set of limits claimed changes the tightest ones: most requests share an
    // entry already claimed and reconfigure nothing (this runs twice per request).
    if (entry) entry.active++;
    else {
      entry = { limits, active: 1 };
      this.claims.set(id, entry);
      this.configure();
    }
    const claimed = entry;
    return () => {
      if (--claimed.active > 0) return;
      this.claims.delete(id);
      // Idle: nothing to reconfigure for; the next request's limits apply when it claims.
      if (this.claims.size > 0) this.configure();
    };
  }

  private configure(): void {
    const active = [...this.claims.values()].map((c) => c.limits);
    const tightest = (pick: (l: EndpointLimits) => number | undefined) =>
      active.map(pick).reduce<number | undefined>((min, n) => (n === undefined ? min : min === undefined ? n : Math.min(min, n)), undefined);
    const now = Date.now();
    this.configuredCap = tightest((l) => l.concurrency)!;
    this.rescale(this.ceiling());
    this.requests.configure(tightest((l) => l.requestsPerMinute), now);
    this.tokens.configure(tightest((l) => l.tokensPerMinute), now);
    this.pump();
  }

  /** A new cap; the window keeps its place relative to the cap, so it follows at once instead of via 429s or additive growth. */
  private rescale(cap: number): void {
    if (cap === this.cap) return;
    this.window = Math.min(cap, Math.max(1, (this.window * cap) / this.cap));
    this.cap = cap;
  }

  /**
   * `workers` processes share this endpoint: admit 1/workers of its concurrency and rates. The
   * window keeps its place relative to the cap, so a worker that joins or leaves moves every
   * window at once instead of waiting for 429s or additive growth.
   */
  share(workers: number): void {
    if (!(workers >= 1) || workers === this.workers) return;
    this.workers = workers;
    this.rescale(this.ceiling());
    const now = Date.now();
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
    this.rescale(this.ceiling());
    if (this.grant === 0 && this.queue.length > 0) this.wantLease();
    this.pump();
  }

  /**
   * This worker's leases of the per-minute rates (the endpointLeases workflow's grants, per minute):
   * a rate without a grant keeps its lease; undefined ends leasing them all (the 1/workers share
   * applies again); 0 admits nothing.
   */
  leaseRates(grants: Partial<Record<RateKind, number>> | undefined): void {
    const now = Date.now();
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
    const now = Date.now();
    // Requests wait at a rate when the head of the line could go but for its budget.
    const head = this.inFlight < this.admissible() ? this.queue[0] : undefined;
    return RATE_KINDS.flatMap((kind) => {
      const budget = this.budget(kind);
      const limit = budget.limit;
      if (limit === undefined) return [];
      const waiting = head !== undefined && budget.waitMs(kind === 'rpm' ? 1 : head.tokens, now) > 0;
      return [{ kind, limit, used: budget.usedPerMinute(now), waiting, holding: budget.perMinute ?? 0 }];
    });
  }

  /** What the lease workflow needs to know of this endpoint here (llm/concurrencyLeases.ts EndpointDemand, less its identity). */
  demand(): { cap: number; inFlight: number; queued: number; holding: number } {
    return { cap: this.configuredCap, inFlight: this.inFlight, queued: this.queue.length, holding: this.grant ?? shareOf(this.configuredCap, this.workers) };
  }

  private ceiling(): number {
    return this.grant === undefined ? shareOf(this.configuredCap, this.workers) : this.configuredCap;
  }

  /** Requests in flight allowed now: the AIMD window within the lease. */
  private admissible(): number {
    return Math.min(Math.floor(this.window), this.grant ?? Number.POSITIVE_INFINITY);
  }

  /** A place in line; pass it to every attempt of one request so retries are not sent to the back. */
  place(): number {
    return this.nextPlace++;
  }

  /**
   * Waits for admission, runs `attempt` and releases its slot however it ends, or earlier: as soon
   * as a 2xx reply has arrived, when the attempt fetches with httpFetch (AttemptSlot). `limits`: those of
   * the configuration making the request (see `claim`); the constructor's otherwise.
   */
  async run<T>(estimatedTokens: number, attempt: (ticket: Ticket) => Promise<T>, place = this.place(), limits = this.initial, signal?: AbortSignal): Promise<T> {
    const release = this.claim(limits);
    try {
      return await this.admitted(estimatedTokens, attempt, place, signal);
    } finally {
      release();
    }
  }

  private async admitted<T>(estimatedTokens: number, attempt: (ticket: Ticket) => Promise<T>, place: number, signal: AbortSignal | undefined): Promise<T> {
    const epoch = await this.admission(place, estimatedTokens, signal);
    const slot = new Slot(
      () => {
        this.inFlight--;
        this.pump();
      },
      (headers) => this.learn(headers, Date.now()),
    );
    const ticket: Ticket = {
      succeeded: (headers, tokensUsed) => {
        const now = Date.now();
        // Learnt once: the slot learns them when the reply arrives (a second reading would forget the requests admitted since).
        if (headers && !slot.learned) this.learn(headers, now);
        if (tokensUsed !== undefined) this.tokens.correct(estimatedTokens, tokensUsed, now);
        this.strikes = 0;
        this.window = Math.min(this.cap, this.window + 1 / this.window);
      },
      rateLimited: (headers) => {
        const now = Date.now();
        if (headers) this.learn(headers, now);
        if (epoch === this.epoch) {
          this.epoch++;
          this.strikes++;
          // Half of what was allowed: under a lease smaller than the window, the lease.
          this.window = Math.max(1, Math.min(this.window, this.grant ?? this.window) / 2);
        }
        const pause = retryAfterMs(headers, now) ?? Math.min(MAX_DEFAULT_PAUSE_MS, DEFAULT_PAUSE_MS * 2 ** Math.max(0, this.strikes - 1));
        this.pausedUntil = Math.max(this.pausedUntil, now + pause);
      },
    };
    try {
      return await slots.run(slot, () => attempt(ticket));
    } finally {
      slot.release();
    }
  }

  /**
   * Waits in line; an abort (cancelled activity, stopping worker) leaves the line at once: a paused
   * endpoint (Retry-After) or a spent budget can hold a request for minutes.
   */
  private admission(place: number, tokens: number, signal: AbortSignal | undefined): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => {
        const at = this.queue.indexOf(waiter);
        if (at < 0) return; // already admitted
        this.queue.splice(at, 1);
        this.pump();
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
      this.enqueue(waiter);
    });
  }

  snapshot(): LimiterSnapshot {
    return {
      workers: this.workers,
      concurrency: Math.min(this.cap, this.grant ?? this.cap),
      leased: this.grant !== undefined,
      window: this.window,
      inFlight: this.inFlight,
      queued: this.queue.length,
      pausedForMs: Math.max(0, this.pausedUntil - Date.now()),
      requestsPerMinute: this.requests.perMinute,
      tokensPerMinute: this.tokens.perMinute,
    };
  }

  private learn(headers: HeaderSource, now: number): void {
    const report = readRateLimitHeaders(headers);
    this.requests.learn(report.requests, now);
    this.tokens.learn(report.tokens, now);
  }

  private enqueue(waiter: Waiter): void {
    let at = this.queue.length;
    while (at > 0 && this.queue[at - 1]!.place > waiter.place) at--;
    this.queue.splice(at, 0, waiter);
    if (this.grant === 0) this.wantLease();
    this.pump();
  }

  /** Admits from the head while it fits; otherwise a release or the one timer calls again. */
  private pump(): void {
    for (let head = this.queue[0]; head; head = this.queue[0]) {
      if (this.inFlight >= this.admissible()) return;
      const now = Date.now();
      const wait = Math.max(this.pausedUntil - now, this.requests.waitMs(1, now), this.tokens.waitMs(head.tokens, now));
      // A rate leased at 0: nothing to wait for but a lease (asked for; a grant pumps).
      if (wait === Number.POSITIVE_INFINITY) return this.wantLease();
      if (wait > 0) return this.wakeIn(wait, now);
      this.queue.shift();
      this.inFlight++;
      this.requests.take(1, now);
      this.tokens.take(head.tokens, now);
      head.admit(this.epoch);
    }
  }

  private wakeIn(ms: number, now: number): void {
    const at = now + ms;
    if (this.timer && this.timerAt <= at) return;
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.timerAt = Number.POSITIVE_INFINITY;
      this.pump();
    }, Math.ceil(ms));
  }
}

/** Where an admitted request's slot time went, by bench/benchWorker.ts --trace: ms since admission per event. */
export interface SlotTimes {
  /** performance.timeOrigin + performance.now() at admission. */
  admittedAt: number;
  [event: string]: number;
}

/** What code running inside an attempt (the HTTP fetch, the sent log) can tell its slot. */
export interface AttemptSlot {
  /** Marks `event` in the slot's trace, when one is traced (`slotTraces` has subscribers). */
  stamp(event: string): void;
  /**
   * The whole reply has arrived: the endpoint has finished the request, so a 2xx frees the slot now,
   * its rate-limit headers learnt first, instead of after the SDK's parsing and the caller's next
   * loop turns. Other statuses keep it until the attempt ends: a 429's pause must apply before the
   * next request goes. The token budget is corrected to the reply's usage a little later (the
   * ticket, once the SDK has parsed the body: well under a millisecond), so a request admitted in
   * between is judged on the estimate, against a per-minute window.
   */
  replied(status: number, headers: HeaderSource): void;
}

/** Published with an admitted request's times when its slot is released (subscribed to by bench tracing only). */
export const slotTraces = diagnosticsChannel.channel('mmif:limiter-slot');

class Slot implements AttemptSlot {
  private readonly times: SlotTimes | undefined;
  private released = false;
  /** The reply's rate-limit headers have been learnt (`replied`). */
  learned = false;

  constructor(
    private readonly free: () => void,
    private readonly learn: (headers: HeaderSource) => void,
  ) {
    this.times = slotTraces.hasSubscribers ? { admittedAt: performance.timeOrigin + performance.now() } : undefined;
  }

  stamp(event: string): void {
    if (this.times) this.times[event] = performance.timeOrigin + performance.now() - this.times.admittedAt;
  }

  replied(status: number, headers: HeaderSource): void {
    if (this.times) {
      // The simulator tells its own times of the request (bench runs): when its headers arrived, when it was counted in flight (its body read) and when it was answered.
      const simulator = headers.get('x-simulator-times')?.split(',').map(Number) ?? [];
      for (const [i, at] of simulator.entries()) this.times[`simulator-${['arrived', 'counted', 'answered'][i]}`] = at - this.times.admittedAt;
    }
    if (status < 200 || status >= 300 || this.released) return;
    this.learn(headers);
    this.learned = true;
    this.release();
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    this.free();
    if (this.times) {
      this.stamp('released');
      slotTraces.publish(this.times);
    }
  }
}

/** The slot of the attempt running in this async context (limiter.run's `attempt`). */
const slots = new AsyncLocalStorage<Slot>();

/** The slot of the attempt this code runs in, if any; take it synchronously where the call starts (emitter callbacks may run in another context). */
export function attemptSlot(): AttemptSlot | undefined {
  return slots.getStore();
}

/** The per-minute limits, as the lease workflow knows them (an endpoint's entry id + `/rpm`, `/tpm`). */
export type RateKind = 'rpm' | 'tpm';
const RATE_KINDS: readonly RateKind[] = ['rpm', 'tpm'];

/** A worker's part of a limit shared by `workers`: at least 1, so every worker makes progress. */
function shareOf(limit: number, workers: number): number {
  return Math.max(1, Math.floor(limit / workers));
}

const limiters = new Map<string, EndpointLimiter>();
let workersSharing = 1;
let leaseWanted: (() => void) | undefined;

/** The worker-wide limiter of an endpoint, created on first use; each request passes its own limits to `run`. */
export function limiterFor(endpoint: ResolvedEndpoint, limits: EndpointLimits): EndpointLimiter {
  const id = endpointIdentity(endpoint);
  const existing = limiters.get(id);
  if (existing) return existing;
  const limiter = new EndpointLimiter(limits, workersSharing, leaseWanted);
  limiters.set(id, limiter);
  return limiter;
}

/** Every endpoint limiter of this process, for diagnostics (bench/benchWorker.ts traces them). */
export function limiterSnapshots(): LimiterSnapshot[] {
  return [...limiters.values()].map((limiter) => limiter.snapshot());
}

/** How many worker processes share every endpoint this process calls (1 = this one alone). */
export function shareEndpointsAmong(workers: number): void {
  workersSharing = Math.max(1, Math.floor(workers));
  for (const limiter of limiters.values()) limiter.share(workersSharing);
}

/**
 * Leases every endpoint's concurrency, present and future, through the lease workflow
 * (worker/endpointSharing.ts): each waits for its first grant, and `wanted` is called when requests
 * wait with no lease held. Undefined stops leasing: the 1/N split applies again.
 */
export function leaseConcurrency(wanted: (() => void) | undefined): void {
  leaseWanted = wanted;
  for (const limiter of limiters.values()) limiter.leaseThrough(wanted);
}

/** Each endpoint's demand here, its concurrency and its known per-minute rates, for the lease workflow; endpoints by an opaque id. */
export function endpointDemands(): EndpointDemand[] {
  return [...limiters.entries()].flatMap(([id, limiter]) => [
    { endpoint: leaseId(id), ...limiter.demand() },
    ...limiter.rateDemands().map(({ kind, ...rate }) => rateDemand(`${leaseId(id)}/${kind}`, rate)),
  ]);
}

/** Applies the lease workflow's grants (by endpointDemands' ids); undefined for all: back to the 1/N split until the next grants. */
export function applyLeases(grants: Record<string, number> | undefined): void {
  for (const [id, limiter] of limiters.entries()) {
    if (grants === undefined) {
      limiter.holdLeases(undefined);
      continue;
    }
    const endpoint = leaseId(id);
    if (grants[endpoint] !== undefined) limiter.lease(grants[endpoint]);
    limiter.leaseRates({ rpm: grants[`${endpoint}/rpm`], tpm: grants[`${endpoint}/tpm`] });
  }
}

/** Holds no lease (before telling the workflow this worker releases them): requests wait for a new one. */
export function dropLeases(): void {
  for (const limiter of limiters.values()) limiter.holdLeases(0);
}

const leaseIds = new Map<string, string>();
function leaseId(identity: string): string {
  let id = leaseIds.get(identity);
  if (!id) leaseIds.set(identity, (id = createHash('sha256').update(identity).digest('hex').slice(0, 16)));
  return id;
}

/** The key enters hashed: the registry never holds it in a form that could be logged. */
export function endpointIdentity(endpoint: ResolvedEndpoint): string {
  const key = createHash('sha256').update(endpoint.apiKey).digest('hex').slice(0, 16);
  return `${endpoint.baseURL}\u0000${endpoint.model}\u0000${key}`;
}
