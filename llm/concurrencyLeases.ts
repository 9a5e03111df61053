/**
 * Endpoint leases: how the workers of one task queue divide an endpoint's concurrency cap and its
 * per-minute limits by demand instead of by head count (docs/adr/0023-endpoint-limits-leased-by-demand.md).
 * Pure bookkeeping, kept by the endpointLeases workflow. Each report carries, per endpoint, the
 * worker's requests in flight and waiting and the grant it admits by now; the answer is its new grant.
 * Fair by demand: the cap is water-filled over the demands, and what no demand takes is spread as
 * headroom. Never over the cap: a grant only uses what no other worker may be holding, counted from
 * each worker's last report, its grant and its lease term (LEASE_MS, counted by the worker from when
 * it sent the report and by the desk from when it handled it: no clocks compared) plus its drain.
 */

/**
 * Per-minute limits (RPM, TPM) are leased the same way, each as an entry of its own (rateDemand):
 * the cap is the limit, the grant the rate the worker paces at, and the demand what it used lately,
 * or the whole limit while requests wait at its rate. The same two rules hold: a busy worker paces
 * at what idle ones do not use, and the rates every worker may pace at sum to at most the limit.
 */

/** One worker's state for one endpoint's limit (its concurrency, or a per-minute rate), as it reports it. */
export interface EndpointDemand {
  /** The endpoint's identity (a hash: never a key). */
  endpoint: string;
  /** The endpoint's concurrency cap, for all workers together, as this worker's config names it. */
  cap: number;
  inFlight: number;
  queued: number;
  /** The grant this worker admits by now (0 before its first one). */
  holding: number;
  /**
   * How long a request admitted under this lease may stay in flight (the worker's attempt timeout):
   * the desk counts the worker's slots this long past its lease's term. None for a per-minute rate
   * (a pace ends with its term).
   */
  drainMs?: number;
  /** A per-minute rate's entry (rateDemand), not a concurrency: its grant is a pace, and the worker never gives it back early. */
  perMinute?: boolean;
}

export interface DemandReport {
  /** The worker's identity, stable for the life of its process. */
  worker: string;
  /** Rises with each report of the worker: a newer report supersedes an older one still waiting for its answer. */
  seq: number;
  endpoints: EndpointDemand[];
  /** The worker stops reporting (idle, or shutting down): forget its leases; it holds nothing by now. */
  release?: boolean;
}

interface Holder {
  cap: number;
  demand: number;
  /** What the worker may have in flight until its next report. */
  holds: number;
  grant: number;
  /** The desk counts `holds` until then: the lease's term and drain. */
  until: number;
}

/** endpoint -> worker -> holder; plain data, so it survives continue-as-new as the workflow's argument. */
export type LeaseBook = Record<string, Record<string, Holder>>;

/**
 * A grant's term: long against an update's round trip on a saturated host (docs/adr/0023), so a late
 * answer costs nothing; short enough that a dead worker's slots come back within a minute or so (plus
 * its drainMs). A worker unanswered past its term admits nothing until an answer comes.
 */
export const LEASE_MS = 30_000;

export interface LeaseAnswer {
  /** The worker's new grant per endpoint (empty when superseded). */
  grants: Record<string, number>;
  /** A newer report of the same worker came in meanwhile: its answer is the one to apply. */
  superseded?: boolean;
  /** Other workers hold leases on these endpoints: only then is a change of demand worth an early report. */
  shared?: boolean;
  /** The grant's term: valid until this many ms after the worker sent its report. */
  termMs: number;
  /**
   * Answered at once although unchanged, because the desk already holds as many reports as it may
   * (workflows/endpointLeases.ts MAX_HELD): report again after this many ms, or sooner on a change
   * worth reporting, instead of at once.
   */
  again?: number;
  /**
   * Endpoints of the report on which another worker asks for more than it is granted: slots this worker does not use are worth giving back at once, one step
   * at a time (worker/endpointSharing.ts), since the desk hands them on in the same workflow task.
   */
  wanted?: string[];
  /**
   * Its fair share exceeds its grant by a step on some endpoint, while others hold the difference:
   * the desk holds its answer before an unowed worker's, so
   * capacity given back reaches it at once.
   */
  owed?: boolean;
}

/**
 * Until when a worker may admit under an answer to the report it sent at `sentAt` (its own clock):
 * the desk counts it at least that long, since it handled the report later.
 */
export const leaseEnds = (sentAt: number, answer: LeaseAnswer): number => sentAt + answer.termMs;

/** The lease entry of a per-minute rate (its own `endpoint` id); numbers per minute. */
export function rateDemand(endpoint: string, rate: { limit: number; used: number; waiting: boolean; holding: number }): EndpointDemand {
  const holding = Math.floor(rate.holding);
  const limit = Math.floor(rate.limit);
  // Requests wait at its rate: it uses all it holds and wants the whole limit (the water-filling
  // splits it among those that do). Otherwise it wants what it used.
  if (rate.waiting) return { endpoint, cap: limit, inFlight: holding, queued: Math.max(0, limit - holding), holding, perMinute: true };
  return { endpoint, cap: limit, inFlight: Math.min(holding, Math.ceil(rate.used)), queued: 0, holding, perMinute: true };
}

/**
 * Applies one worker's report and answers its new grants, each a lease for LEASE_MS; the answer also
 * says where capacity is wanted and whether the worker is owed some (LeaseAnswer.wanted, owed).
 */
export function grantLeases(book: LeaseBook, report: DemandReport, now: number): LeaseAnswer {
  forgetSilent(book, now);
  const answer: LeaseAnswer = { grants: {}, termMs: LEASE_MS };
  if (report.release) {
    for (const holders of Object.values(book)) delete holders[report.worker];
    pruneEmpty(book);
    return answer;
  }
  for (const demand of report.endpoints) {
    const holders = (book[demand.endpoint] ??= {});
    const self: Holder = holders[report.worker] ?? { cap: demand.cap, demand: 0, holds: 0, grant: 0, until: now };
    holders[report.worker] = self;
    self.cap = demand.cap;
    self.demand = demand.inFlight + demand.queued;
    const { entitled, grant } = shareOf(holders, report.worker, demand);
    self.grant = grant;
    self.holds = Math.max(demand.inFlight, demand.holding, self.grant);
    self.until = now + LEASE_MS + (demand.drainMs ?? 0);
    answer.grants[demand.endpoint] = self.grant;
    if (Object.keys(holders).length > 1) answer.shared = true;
    if (Object.entries(holders).some(([worker, h]) => worker !== report.worker && h.demand > h.grant)) (answer.wanted ??= []).push(demand.endpoint);
    if (self.demand > grant && isOwed(entitled, grant)) answer.owed = true;
  }
  return answer;
}

/** A fair share above the grant by this much is owed: less (one slot) is the remainder of the water-filling, which goes to whoever asks first. */
const isOwed = (entitled: number, grant: number): boolean => entitled - grant >= Math.max(2, Math.ceil(entitled / 8));

/**
 * Whether the grants the report would get now differ from what the worker holds by enough to tell
 * it (a lease workflow holds an answer back until then: workflows/endpointLeases.ts). Reads the book
 * without changing it.
 */
export function grantsMoved(book: LeaseBook, report: DemandReport): boolean {
  return report.endpoints.some((demand) => {
    const { grant } = shareOf(book[demand.endpoint] ?? {}, report.worker, demand);
    return Math.abs(grant - demand.holding) >= Math.max(1, Math.floor(demand.holding / 16));
  });
}

/** The fair share of `demand`'s worker (`entitled`), and its grant: that share within what the others cannot be holding. */
function shareOf(holders: Record<string, Holder>, worker: string, demand: EndpointDemand): { entitled: number; grant: number } {
  const others = Object.entries(holders)
    .filter(([w]) => w !== worker)
    .map(([, h]) => h);
  const cap = Math.min(demand.cap, ...others.map((h) => h.cap));
  const entitled = fairShares(cap, [demand.inFlight + demand.queued, ...others.map((h) => h.demand)])[0]!;
  const free = cap - others.reduce((n, h) => n + h.holds, 0);
  return { entitled, grant: Math.max(0, Math.min(entitled, free)) };
}

/** Drops the workers the desk no longer counts (past their term and drain) and endpoints nobody holds. */
export function forgetSilent(book: LeaseBook, now: number): void {
  for (const holders of Object.values(book)) {
    for (const [worker, holder] of Object.entries(holders)) if (now > holder.until) delete holders[worker];
  }
  pruneEmpty(book);
}

function pruneEmpty(book: LeaseBook): void {
  for (const [endpoint, holders] of Object.entries(book)) if (Object.keys(holders).length === 0) delete book[endpoint];
}

/**
 * Max-min fair integer shares of `cap` over `demands` (water-filling): no worker gets more than it
 * asks while another asks for more than it gets; what is left when every demand is met is spread
 * evenly (the first ones get the remainder). The shares sum to `cap`.
 */
export function fairShares(cap: number, demands: number[]): number[] {
  const shares = demands.map(() => 0);
  let left = Math.max(0, Math.floor(cap));
  let open = demands.map((_, i) => i).filter((i) => demands[i]! > 0);
  while (left > 0 && open.length > 0) {
    const level = Math.floor(left / open.length);
    if (level === 0) {
      for (const i of open.slice(0, left)) shares[i]!++;
      return shares;
    }
    for (const i of open) {
      const take = Math.min(level, demands[i]! - shares[i]!);
      shares[i]! += take;
      left -= take;
    }
    open = open.filter((i) => shares[i]! < demands[i]!);
  }
  if (left > 0 && demands.length > 0) {
    const even = Math.floor(left / demands.length);
    const extra = left - even * demands.length;
    for (let i = 0; i < demands.length; i++) shares[i]! += even + (i < extra ? 1 : 0);
  }
  return shares;
}
