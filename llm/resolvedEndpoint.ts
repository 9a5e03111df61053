/** An endpoint as the worker calls it: the configured endpoint with its base URL settled and its key read from the environment (endpoint.ts). */
export interface ResolvedEndpoint {
  /** Where requests go: for Azure, the deployment's URL (<resource>/openai/deployments/<deployment>). */
  baseURL: string;
  model: string;
  apiKey: string;
  /** Set when the key's variable is unset and a placeholder is sent (local servers accept any key): a 401 then says the variable is unset. */
  keyUnset?: true;
  /** Set for an Azure OpenAI deployment (EndpointConfig.azure). */
  azure?: { resource: string; deployment: string; apiVersion: string };
}
