/** An endpoint as the worker calls it: the configured endpoint with its base URL settled and its key read from the environment (endpoint.ts). */
export interface ResolvedEndpoint {
  /** Where requests go: for Azure, the deployment's URL (<resource>/openai/deployments/<deployment>). */
  baseURL: string;
  model: string;
  apiKey: string;
  /** Set for an Azure OpenAI deployment (EndpointConfig.azure). */
  azure?: { resource: string; deployment: string; apiVersion: string };
}
