/**
 * Turns a configured endpoint into what the worker calls: its base URL and key settled from the
 * environment, and the OpenAI (or Azure OpenAI) SDK client shared by every activity of the worker.
 */
import OpenAI, { AzureOpenAI } from 'openai';
import type { EndpointConfig } from '../config/modelsConfig.js';
import { EndpointError } from './endpointError.js';
import { replyLimitedFetch } from './httpFetch.js';
import { attemptSlot } from './attemptSlot.js';
import type { ResolvedEndpoint, ResolvedReplica } from './resolvedEndpoint.js';
import { endpointReplicas } from '../config/endpointReplicas.js';
import { readSecret } from '../config/secrets.js';

const DEFAULT_BASE_URL = 'https://api.openai.com/v1';

/**
 * The base URL an endpoint is known by (its reply cache key, dialect memory and messages): its own,
 * else the worker's OPENAI_BASE_URL, else OpenAI's. With several replicas, the lowest of their URLs,
 * so the order `baseUrls` lists them in changes nothing (docs/adr/0063-replica-routing-per-attempt.md).
 */
export function resolveBaseUrl(endpoint: Pick<EndpointConfig, 'baseUrl' | 'baseUrls'>, env: NodeJS.ProcessEnv = process.env): string {
  if (!endpoint.baseUrls) return settleUrl(endpoint.baseUrl, env);
  return endpoint.baseUrls.map((r) => settleUrl(typeof r === 'string' ? r : r.baseUrl, env)).sort()[0]!;
}

function settleUrl(url: string | undefined, env: NodeJS.ProcessEnv): string {
  return (url ?? env.OPENAI_BASE_URL ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
}

/** Fills an endpoint from the worker's environment: base URL fallback, each replica's URL and the API key (env only). */
export function resolveEndpoint(endpoint: EndpointConfig, env: NodeJS.ProcessEnv = process.env): ResolvedEndpoint {
  const baseURL = resolveBaseUrl(endpoint, env);
  if (endpoint.azure) return resolveAzure(endpoint, endpoint.azure, baseURL, env);
  const replicas: ResolvedReplica[] = endpointReplicas(endpoint).map(({ baseUrl, ...limits }) => ({ baseURL: settleUrl(baseUrl, env), ...limits }));
  const apiKey = readSecret(endpoint.apiKeyEnv, env);
  if (!apiKey && baseURL === DEFAULT_BASE_URL) {
    // Permanent: no retry sets the variable. Names the variable, never a value.
    const message = `model endpoint ${baseURL} (model ${endpoint.model}): the API key variable ${endpoint.apiKeyEnv} is not set`;
    throw new EndpointError(message, { endpoint: baseURL, model: endpoint.model, status: 0, excerpt: `${endpoint.apiKeyEnv} is not set` });
  }
  // Local servers (vLLM, Ollama, the simulator) accept any key; the SDK insists on one.
  return apiKey ? { baseURL, model: endpoint.model, apiKey, replicas } : { baseURL, model: endpoint.model, apiKey: 'not-needed', keyUnset: true, replicas };
}

/**
 * An Azure OpenAI deployment: chat completions are POST
 * <resource>/openai/deployments/<deployment>/chat/completions?api-version=<version> with the key in
 * an `api-key` header (https://learn.microsoft.com/en-us/azure/ai-foundry/openai/reference#chat-completions).
 * Its base URL is the deployment's, so the limiter, the model cache and every message tell two
 * deployments of one resource apart.
 */
function resolveAzure(endpoint: EndpointConfig, azure: NonNullable<EndpointConfig['azure']>, baseURL: string, env: NodeJS.ProcessEnv): ResolvedEndpoint {
  // The SDK adds /openai itself; a resource URL given with it is taken as meant.
  const resource = baseURL.replace(/\/openai$/, '');
  const deployment = azure.deployment ?? endpoint.model;
  const deploymentURL = `${resource}/openai/deployments/${deployment}`;
  const apiKey = readSecret(endpoint.apiKeyEnv, env);
  if (!apiKey || resource === DEFAULT_BASE_URL) {
    const excerpt = !apiKey ? `${endpoint.apiKeyEnv} is not set` : 'baseUrl must be the Azure resource endpoint (https://<resource>.openai.azure.com)';
    throw new EndpointError(`model endpoint ${deploymentURL} (model ${endpoint.model}): ${!apiKey ? `the API key variable ${excerpt}` : excerpt}`, {
      endpoint: deploymentURL,
      model: endpoint.model,
      status: 0,
      excerpt,
    });
  }
  const replica = { baseURL: deploymentURL, concurrency: endpoint.concurrency, requestsPerMinute: endpoint.requestsPerMinute, tokensPerMinute: endpoint.tokensPerMinute };
  return { baseURL: deploymentURL, model: endpoint.model, apiKey, azure: { resource, deployment, apiVersion: azure.apiVersion }, replicas: [replica] };
}

const clients = new Map<string, OpenAI>();

/**
 * One SDK client per endpoint and key, shared by every activity of the worker, sending through
 * httpFetch (keep-alive sockets, no web streams) with model replies read up to `maxReplyBytes`
 * (the Batch API's result files are not capped). The SDK does not retry: ModelCaller does, through
 * the endpoint's limiter.
 */
export function clientFor(endpoint: ResolvedEndpoint, timeoutMs: number, maxReplyBytes = Infinity): OpenAI {
  const id = `${endpoint.baseURL}\u0000${endpoint.azure?.apiVersion ?? ''}\u0000${endpoint.apiKey}\u0000${timeoutMs}\u0000${maxReplyBytes}`;
  let client = clients.get(id);
  if (!client) {
    const fetch = replyLimitedFetch(maxReplyBytes, attemptSlot);
    const options = { apiKey: endpoint.apiKey, timeout: timeoutMs, maxRetries: 0, fetch };
    const azure = endpoint.azure;
    // AzureOpenAI puts the deployment in the path, api-version in the query and the key in `api-key`.
    // Its base URL is given (not `endpoint`): the SDK would otherwise take OPENAI_BASE_URL from the environment.
    client = azure
      ? new AzureOpenAI({ ...options, baseURL: `${azure.resource}/openai`, deployment: azure.deployment, apiVersion: azure.apiVersion })
      : new OpenAI({ ...options, baseURL: endpoint.baseURL });
    clients.set(id, client);
  }
  return client;
}
