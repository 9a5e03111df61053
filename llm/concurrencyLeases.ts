/**
 * Endpoint leases: how the workers of one task queue divide an endpoint's concurrency cap, and its
 * per-minute request and token limits, by demand instead of by head count. Pure bookkeeping, kept by the endpointLeases workflow
 * (workflows/endpointLeases.ts), which every worker reports to a few times per second.
 *
 * Why not 1/N: a worker whose activities are all between model calls (images at a shard's start,
 * a stage barrier at a slice's end) leaves its 1/N unused while the others are held at theirs with
 * requests waiting; with 4 workers on a C = 128 cap that cost 10-15% of the limit.
 *
 * Each report carries, per endpoint, the worker's requests in flight and waiting and the grant it
 * admits by now; the answer is its new grant (held back by the workflow until it differs from what
 * the worker holds: a long poll, so capacity given back by one worker reaches a waiting one at once,
 * and nothing is sent while nothing changes). Two rules:
 * - Fair by demand: the cap is water-filled over the workers' demands (in flight + waiting), so a
 *   busy worker borrows what idle ones do not use and gives it back as soon as they want it; what no
 *   demand claims is spread evenly as headroom for demand that appears before the next report.
 * - Never over the cap: a grant only uses what the other workers cannot be holding. A worker may
 *   hold max(its in flight at its last report, the grant it held then, the grant sent back to it)
 *   until its next report: the grant sent back may not have arrived yet, and a lowered grant does not
 *   recall requests already sent. So capacity moves from one worker to another within two reports,
 *   and the sum of what every worker may have in flight stays within the cap at every moment.
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
  seenAt: number;
}

/** endpoint -> worker -> holder; plain data, so it survives continue-as-new as the workflow's argument. */
export type LeaseBook = Record<string, Record<string, Holder>>;

/** A worker silent this long is gone: its leases return to the pool (workers report every fraction of a second while busy). */
export const SILENT_MS = 20_000;

export interface LeaseAnswer {
  /** The worker's new grant per endpoint (empty when superseded). */
  grants: Record<string, number>;
  /** A newer report of the same worker came in meanwhile: its answer is the one to apply. */
  superseded?: boolean;
  /** Other workers hold leases on these endpoints: only then is a change of demand worth an early report. */
  shared?: boolean;
  /**
   * Answered at once although unchanged, because the desk already holds as many reports as it may
   * (workflows/endpointLeases.ts MAX_HELD): report again after this many ms, or sooner on a change
   * worth reporting, instead of at once.
   */
  again?: number;
}

/** The lease entry of a per-minute rate (its own `endpoint` id); numbers per minute. */
export function rateDemand(endpoint: string, rate: { limit: number; used: number; waiting: boolean; holding: number }): EndpointDemand {
  const holding = Math.floor(rate.holding);
  const limit = Math.floor(rate.limit);
  // Requests wait at its rate: it uses all it holds and wants the whole limit (the water-filling
  // splits it among those that do). Otherwise it wants what it used.
  if (rate.waiting) return { endpoint, cap: limit, inFlight: holding, queued: Math.max(0, limit - holding), holding };
  return { endpoint, cap: limit, inFlight: Math.min(holding, Math.ceil(rate.used)), queued: 0, holding };
}

/** Applies one worker's report and answers its new grants. */
export function grantLeases(book: LeaseBook, report: DemandReport, now: number): LeaseAnswer {
  forgetSilent(book, now);
  const answer: LeaseAnswer = { grants: {} };
  if (report.release) {
    for (const holders of Object.values(book)) delete holders[report.worker];
    pruneEmpty(book);
    return answer;
  }
  for (const demand of report.endpoints) {
    const holders = (book[demand.endpoint] ??= {});
    const self: Holder = holders[report.worker] ?? { cap: demand.cap, demand: 0, holds: 0, grant: 0, seenAt: now };
    holders[report.worker] = self;
    self.cap = demand.cap;
    self.demand = demand.inFlight + demand.queued;
    self.seenAt = now;
    self.grant = grantFor(holders, report.worker, demand);
    self.holds = Math.max(demand.inFlight, demand.holding, self.grant);
    answer.grants[demand.endpoint] = self.grant;
    if (Object.keys(holders).length > 1) answer.shared = true;
  }
  return answer;
}

/**
 * Whether the grants the report would get now differ from what the worker holds by enough to tell
 * it (a lease workflow holds an answer back until then: workflows/endpointLeases.ts). Reads the book
 * without changing it.
 */
export function grantsMoved(book: LeaseBook, report: DemandReport): boolean {
  return report.endpoints.some((demand) => {
    const grant = grantFor(book[demand.endpoint] ?? {}, report.worker, demand);
    return Math.abs(grant - demand.holding) >= Math.max(1, Math.floor(demand.holding / 16));
  });
}

/** The fair share of `demand`'s worker, within what the others cannot be holding. */
function grantFor(holders: Record<string, Holder>, worker: string, demand: EndpointDemand): number {
  const others = Object.entries(holders)
    .filter(([w]) => w !== worker)
    .map(([, h]) => h);
  const cap = Math.min(demand.cap, ...others.map((h) => h.cap));
  const entitled = fairShares(cap, [demand.inFlight + demand.queued, ...others.map((h) => h.demand)])[0]!;
  const free = cap - others.reduce((n, h) => n + h.holds, 0);
  return Math.max(0, Math.min(entitled, free));
}

/** Drops the workers silent for SILENT_MS (and endpoints nobody holds). */
export function forgetSilent(book: LeaseBook, now: number): void {
  for (const holders of Object.values(book)) {
    for (const [worker, holder] of Object.entries(holders)) if (now - holder.seenAt > SILENT_MS) delete holders[worker];
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
