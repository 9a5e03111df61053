/**
 * The worker-wide registry of endpoint limiters: every activity of a worker process shares one
 * EndpointLimiter per endpoint (llm/endpointLimiter.ts). An endpoint is a base URL + model + API
 * key: providers count limits per organisation/project key and per model, so two stages on one
 * model share a limiter, and the same model under two keys does not. The registry also carries the
 * worker's sharing of endpoints with the other workers (1/N, or leases from the endpointLeases
 * workflow, worker/endpointSharing.ts) to every limiter, present and future.
 */
import { createHash } from 'node:crypto';
import type { ResolvedEndpoint } from './resolvedEndpoint.js';
import { rateDemand, type EndpointDemand } from './concurrencyLeases.js';
import { EndpointLimiter, type LimiterSnapshot } from './endpointLimiter.js';
import type { EndpointLimits } from './endpointLimits.js';
import { endpointLabel, inFlight, limitInUse, recordLeaseGrant, sampleOnScrape } from '../telemetry/metrics.js';

const limiters = new Map<string, EndpointLimiter>();
let workersSharing = 1;
let leaseWanted: (() => void) | undefined;

/** The worker-wide limiter of an endpoint, created on first use; each request passes its own limits to `run`. */
export function limiterFor(endpoint: ResolvedEndpoint, limits: EndpointLimits): EndpointLimiter {
  const id = endpointIdentity(endpoint);
  const existing = limiters.get(id);
  if (existing) return existing;
  const limiter = new EndpointLimiter(limits, { workers: workersSharing, leaseWanted });
  limiters.set(id, limiter);
  return limiter;
}

/** Every endpoint limiter of this process, for diagnostics (bench/benchWorker.ts traces them). */
export function limiterSnapshots(): LimiterSnapshot[] {
  return [...limiters.values()].map((limiter) => limiter.snapshot());
}

/** An endpoint's metric labels, from its identity (its key's hash left out). */
function endpointLabels(identity: string): { endpoint: string; model: string } {
  const [baseURL, model] = identity.split('\u0000');
  return { endpoint: endpointLabel(baseURL!), model: model! };
}

sampleOnScrape(() => {
  inFlight.reset();
  limitInUse.reset();
  for (const [id, limiter] of limiters.entries()) {
    const labels = endpointLabels(id);
    const { inFlight: n, concurrency } = limiter.snapshot();
    inFlight.inc(labels, n);
    limitInUse.set(labels, concurrency > 0 ? n / concurrency : 0);
  }
});

/** How many worker processes share the endpoints (the live pollers of the task queue; 1 = this one alone). */
export function endpointWorkers(): number {
  return workersSharing;
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

/** Applies the lease workflow's grants (by endpointDemands' ids). */
export function applyLeases(grants: Record<string, number>): void {
  for (const [id, limiter] of limiters.entries()) {
    const endpoint = leaseId(id);
    if (grants[endpoint] !== undefined) {
      limiter.lease(grants[endpoint]);
      recordLeaseGrant(endpointLabels(id));
    }
    limiter.leaseRates({ rpm: grants[`${endpoint}/rpm`], tpm: grants[`${endpoint}/tpm`] });
  }
}

/**
 * Lowers this worker's concurrency leases (by endpointDemands' ids) to the grants named, where they
 * are lower: slots it gives back before it tells the lease workflow (worker/endpointSharing.ts).
 * Per-minute rates and endpoints not leased keep theirs.
 */
export function lowerLeases(grants: Record<string, number>): void {
  for (const [id, limiter] of limiters.entries()) {
    const grant = grants[leaseId(id)];
    if (grant !== undefined && limiter.snapshot().leased && grant < limiter.demand().holding) limiter.lease(grant);
  }
}

/** Holds no lease (before telling the workflow this worker releases them, or past a lease's term): requests wait for a new one. */
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
