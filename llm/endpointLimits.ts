/**
 * The concurrency and rate limits a config sets on an endpoint, in the shape its limiter
 * (llm/endpointLimiter.ts) holds them: one definition for what a replica starts with.
 */
import type { EndpointConfig } from '../config/modelsConfig.js';

/** The limits a configuration sets on one endpoint (llm config and the endpoint's own), as a request holds them in the endpoint's limiter. */
export interface EndpointLimits {
  /** Requests in flight at most (the AIMD cap). */
  concurrency: number;
  requestsPerMinute?: number;
  tokensPerMinute?: number;
  /** The longest an admitted attempt stays in flight (the client aborts it then): how long a lease's slots drain past its term (llm/concurrencyLeases.ts). */
  attemptTimeoutMs?: number;
  /** The longest the endpoint is paused for, or a learned budget waits for its reset, whatever it asks (llm.maxRetryAfterSeconds). */
  maxWaitMs?: number;
}

/**
 * The limits the config sets on one replica of an endpoint (config/endpointReplicas.ts: a single
 * `baseUrl` is one replica with the endpoint's own); its limiter learns the rest from the provider's headers.
 */
export const configuredLimits = (r: Pick<EndpointConfig, 'concurrency' | 'requestsPerMinute' | 'tokensPerMinute'>): EndpointLimits => ({
  concurrency: r.concurrency,
  requestsPerMinute: r.requestsPerMinute,
  tokensPerMinute: r.tokensPerMinute,
});
