/**
 * An endpoint's replicas, each with its own limits: the one definition of how `baseUrl` and
 * `baseUrls` (config/modelsConfig.ts) become a replica list. Without zod (types only), so workflow
 * code (config/endpointRouting.ts: lanes and the limit shown in `status`) and the worker
 * (llm/endpoint.ts) read the same list. A single `baseUrl` (or none: the worker's
 * OPENAI_BASE_URL) is one replica carrying the endpoint's limits; a `baseUrls` entry's unset limits
 * are the endpoint's, applied to that replica alone.
 */
import type { EndpointConfig } from './modelsConfig.js';

interface ReplicaConfig {
  /** Unset only for an endpoint with neither baseUrl nor baseUrls (the worker's OPENAI_BASE_URL). */
  baseUrl?: string;
  concurrency: number;
  requestsPerMinute?: number;
  tokensPerMinute?: number;
}

export function endpointReplicas(e: EndpointConfig): ReplicaConfig[] {
  const limits = { concurrency: e.concurrency, requestsPerMinute: e.requestsPerMinute, tokensPerMinute: e.tokensPerMinute };
  if (!e.baseUrls) return [{ baseUrl: e.baseUrl, ...limits }];
  return e.baseUrls.map((r) => {
    if (typeof r === 'string') return { baseUrl: r, ...limits };
    return {
      baseUrl: r.baseUrl,
      concurrency: r.concurrency ?? e.concurrency,
      requestsPerMinute: r.requestsPerMinute ?? e.requestsPerMinute,
      tokensPerMinute: r.tokensPerMinute ?? e.tokensPerMinute,
    };
  });
}

/** Whether the endpoint names its server(s) itself; if not, it is the worker's OPENAI_BASE_URL. */
export const namesBaseUrl = (e: Pick<EndpointConfig, 'baseUrl' | 'baseUrls'>): boolean => e.baseUrl !== undefined || e.baseUrls !== undefined;

/** The replica URLs as configured (one undefined for the worker's OPENAI_BASE_URL): what tells two endpoints' servers apart. */
export const replicaUrls = (e: EndpointConfig): (string | undefined)[] => endpointReplicas(e).map((r) => r.baseUrl);
