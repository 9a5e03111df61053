/** An endpoint as the worker calls it: the configured endpoint with its base URL settled and its key read from the environment (endpoint.ts). */
export interface ResolvedEndpoint {
  /**
   * The endpoint's identity in the reply cache, the dialect memory and messages: for Azure, the
   * deployment's URL (<resource>/openai/deployments/<deployment>); with several replicas, the lowest
   * of their URLs, whatever their order (requests go to the replica llm/replicaRoute.ts picks, as an
   * endpoint of its own).
   */
  baseURL: string;
  model: string;
  apiKey: string;
  /** Set when the key's variable is unset and a placeholder is sent (local servers accept any key): a 401 then says the variable is unset. */
  keyUnset?: true;
  /** Set for an Azure OpenAI deployment (EndpointConfig.azure). */
  azure?: { resource: string; deployment: string; apiVersion: string };
  /** The servers of this model, in config order, each with its own limits (config/endpointReplicas.ts); one for a single baseUrl. */
  replicas: readonly ResolvedReplica[];
}

/** One replica as called: its settled base URL and its limits. */
export interface ResolvedReplica {
  baseURL: string;
  concurrency: number;
  requestsPerMinute?: number;
  tokensPerMinute?: number;
}
