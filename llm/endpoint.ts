import OpenAI from 'openai';
import type { EndpointConfig } from '../config/buildConfig.js';
import { EndpointError } from './endpointError.js';
import { httpFetch, replyLimitedFetch } from './httpFetch.js';
import { readSecret } from '../config/secrets.js';

export const DEFAULT_BASE_URL = 'https://api.openai.com/v1';

export interface ResolvedEndpoint {
  baseURL: string;
  model: string;
  apiKey: string;
}

/** Fills an endpoint from the worker's environment: base URL fallback and the API key (env only). */
/** The base URL an endpoint is called at: its own, else the worker's OPENAI_BASE_URL, else OpenAI's. */
export function resolveBaseUrl(endpoint: Pick<EndpointConfig, 'baseUrl'>, env: NodeJS.ProcessEnv = process.env): string {
  return (endpoint.baseUrl ?? env.OPENAI_BASE_URL ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
}

export function resolveEndpoint(endpoint: EndpointConfig, env: NodeJS.ProcessEnv = process.env): ResolvedEndpoint {
  const baseURL = resolveBaseUrl(endpoint, env);
  const apiKey = readSecret(endpoint.apiKeyEnv, env);
  if (!apiKey && baseURL === DEFAULT_BASE_URL) {
    // Permanent: no retry sets the variable. Names the variable, never a value.
    const message = `model endpoint ${baseURL} (model ${endpoint.model}): the API key variable ${endpoint.apiKeyEnv} is not set`;
    throw new EndpointError(message, { endpoint: baseURL, model: endpoint.model, status: 0, excerpt: `${endpoint.apiKeyEnv} is not set` });
  }
  // Local servers (vLLM, Ollama, the simulator) accept any key; the SDK insists on one.
  return { baseURL, model: endpoint.model, apiKey: apiKey || 'not-needed' };
}

const clients = new Map<string, OpenAI>();

/**
 * One SDK client per endpoint and key, shared by every activity of the worker, sending through
 * httpFetch (keep-alive sockets, no web streams) with model replies read up to `maxReplyBytes`
 * (the Batch API's result files are not capped). The SDK does not retry: ModelCaller does, through
 * the endpoint's limiter.
 */
export function clientFor(endpoint: ResolvedEndpoint, timeoutMs: number, maxReplyBytes = Infinity): OpenAI {
  const id = `${endpoint.baseURL}\u0000${endpoint.apiKey}\u0000${timeoutMs}\u0000${maxReplyBytes}`;
  let client = clients.get(id);
  if (!client) {
    const fetch = Number.isFinite(maxReplyBytes) ? replyLimitedFetch(maxReplyBytes) : httpFetch;
    client = new OpenAI({ baseURL: endpoint.baseURL, apiKey: endpoint.apiKey, timeout: timeoutMs, maxRetries: 0, fetch });
    clients.set(id, client);
  }
  return client;
}
