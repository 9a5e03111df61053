/**
 * Errors that name the endpoint. An endpoint's answer that no retry can change (a bad key, an
 * unknown model, an exhausted quota) becomes an EndpointError, which the activities turn into a
 * non-retryable failure: the build stops in seconds with the endpoint, model and status in the
 * message, instead of retrying for minutes.
 */
import { APIError } from 'openai';
import type { ModelCallFault } from '../domain/rejection.js';
import type { ResolvedEndpoint } from './resolvedEndpoint.js';
import { InputError } from '../domain/errors.js';
import { maskValue } from '../config/secrets.js';

export class EndpointError extends InputError {
  override name = 'EndpointError';
  constructor(
    message: string,
    readonly fault: ModelCallFault,
  ) {
    super(message);
  }
}

const EXCERPT_CHARS = 300;

/**
 * The start of an error text with the endpoint's key, in any form it is echoed in (config/secrets.ts),
 * and anything shaped like an OpenAI key replaced: providers and proxies echo keys in their error
 * bodies ("Incorrect API key provided: sk-...", an Authorization header base64-encoded).
 */
export function maskedExcerpt(text: string, endpoint: Pick<ResolvedEndpoint, 'apiKey'>): string {
  let masked = maskValue(text, endpoint.apiKey, '***');
  masked = masked.replace(/\bsk-[A-Za-z0-9_-]{6,}/g, 'sk-***');
  return masked.length > EXCERPT_CHARS ? `${masked.slice(0, EXCERPT_CHARS)}…` : masked;
}

/** The fault of a failed request, with its status and masked message. */
export function faultOf(err: APIError, endpoint: ResolvedEndpoint): ModelCallFault {
  // The SDK's message starts with the status, which the fault carries on its own.
  const message = err.message.replace(/^\d{3}\s+/, '');
  // llama.cpp's server puts the HTTP status itself in `error.code` (format_error_response in
  // tools/server/server-common.cpp): that is no code worth repeating after the status.
  const code = err.code && String(err.code) !== String(err.status) ? err.code : undefined;
  return { endpoint: endpoint.baseURL, model: endpoint.model, status: err.status ?? 0, excerpt: maskedExcerpt(code ? `${code}: ${message}` : message, endpoint) };
}

/** "model endpoint URL (model M)": how every message names the endpoint and model of a call. */
export const endpointNamed = (endpoint: string, model: string) => `model endpoint ${endpoint} (model ${model})`;

/** "HTTP 500: <excerpt>": what the endpoint answered. */
export const httpAnswer = (fault: Pick<ModelCallFault, 'status' | 'excerpt'>) => `HTTP ${fault.status}: ${fault.excerpt}`;

/**
 * A 429 that asks for a longer wait than `maxMs` (llm.maxRetryAfterSeconds): "HTTP 429: asked to wait
 * 100000 s (27.8 h), beyond llm.maxRetryAfterSeconds (300 s): the endpoint refuses requests for now".
 */
export function refusingForNow(askedMs: number, maxMs: number): string {
  const seconds = Math.ceil(askedMs / 1000);
  const hours = seconds >= 3600 ? ` (${(seconds / 3600).toFixed(1)} h)` : '';
  return `HTTP 429: asked to wait ${seconds} s${hours}, beyond llm.maxRetryAfterSeconds (${maxMs / 1000} s): the endpoint refuses requests for now`;
}

/** "model endpoint URL (model M): HTTP 401: <excerpt>" — one wording for every message about a fault. */
export function describeFault(fault: ModelCallFault): string {
  return `${endpointNamed(fault.endpoint, fault.model)}: ${httpAnswer(fault)}`;
}

/**
 * "<who>: model endpoint URL (model M): <what happened>, N attempts": the one line of a model call
 * that failed on every attempt it was given (sendCompletion.ts's EndpointGaveUp), whatever the kind
 * (a 5xx, a 429 that never cleared, a timeout, no connection). `who` is the model role, or a role's
 * Batch API call (batch.ts); `what` is masked by its maker.
 */
export function gaveUpLine(who: string, endpoint: Pick<ResolvedEndpoint, 'baseURL' | 'model'>, what: string, attempts: number): string {
  return `${who}: ${endpointNamed(endpoint.baseURL, endpoint.model)}: ${what}, ${attempts} attempt${attempts === 1 ? '' : 's'}`;
}

/**
 * What to check after a permanent answer, from the providers' own documentation of these answers:
 * OpenAI's error codes (https://developers.openai.com/docs/guides/error-codes: 401 "Incorrect API
 * key provided" → use the right key; 403 → region or project access; 429 "You exceeded your current
 * quota, please check your plan and billing details", code `insufficient_quota` → add credits or
 * raise the spend limit). Self-hosted servers answer the same statuses: vLLM 404 NotFoundError "The
 * model `m` does not exist." (vllm/entrypoints/openai/serving_engine.py, _check_model) and 401
 * "Unauthorized" under --api-key (vllm/entrypoints/openai/api_server.py); llama.cpp's server 401
 * "Invalid API Key" (authentication_error) and 404 (not_found_error) (format_error_response in
 * tools/server/server-common.cpp); Ollama 404 "model "m" not found, try pulling it first"
 * (ollama openai/openai.go). The hint names the key's variable, never the key.
 */
function hintFor(fault: ModelCallFault, code: unknown, apiKeyEnv: string, keyUnset: boolean): string | undefined {
  if (fault.status === 401 && keyUnset) return `no API key was sent: ${apiKeyEnv} (the variable named by apiKeyEnv) is not set where the model is called: set it there`;
  if (code === 'insufficient_quota') return `the account is out of quota or credit: check the plan and billing of the account whose key is in ${apiKeyEnv}`;
  if (fault.status === 401) return `the API key was refused: check the key in ${apiKeyEnv} (the variable named by apiKeyEnv)`;
  if (fault.status === 403) return `the API key may not use this endpoint or model: check the key in ${apiKeyEnv} and its access to model ${fault.model}`;
  if (fault.status === 404) return `unknown model or wrong base URL: check the model name ${fault.model} (models.<role>.model) and baseUrl (or the worker's OPENAI_BASE_URL)`;
  return undefined;
}

/**
 * A permanent failure of a call: "<who>: model endpoint URL (model M): HTTP 401: <excerpt> — <what
 * to check>", where `who` is the model role (or the roles a pre-flight check serves, or a Batch API
 * call of a role's requests).
 */
export function permanentError(err: APIError, endpoint: ResolvedEndpoint, apiKeyEnv: string, who: string): EndpointError {
  const fault = faultOf(err, endpoint);
  const hint = hintFor(fault, err.code, apiKeyEnv, endpoint.keyUnset ?? false);
  return new EndpointError(`${who}: ${describeFault(fault)}${hint ? ` — ${hint}` : ''}`, fault);
}
