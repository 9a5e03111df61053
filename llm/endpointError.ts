/**
 * Errors that name the endpoint. An endpoint's answer that no retry can change (a bad key, an
 * unknown model, an exhausted quota) becomes an EndpointError, which the activities turn into a
 * non-retryable failure: the build stops in seconds with the endpoint, model and status in the
 * message, instead of retrying for minutes.
 */
import { APIError } from 'openai';
import type { ModelCallFault } from '../domain/rejection.js';
import type { ResolvedEndpoint } from './endpoint.js';
import { classifyFailure } from './retryPolicy.js';
import { InputError } from '../domain/errors.js';

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
 * The start of an error text with the endpoint's key (and anything shaped like an OpenAI key)
 * replaced: providers and proxies echo keys in their error bodies ("Incorrect API key provided: sk-...").
 */
export function maskedExcerpt(text: string, endpoint: Pick<ResolvedEndpoint, 'apiKey'>): string {
  let masked = text;
  if (endpoint.apiKey.length >= 6) masked = masked.split(endpoint.apiKey).join('***');
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

/** "model endpoint URL (model M): HTTP 401: <excerpt>" — one wording for every message about a fault. */
export function describeFault(fault: ModelCallFault): string {
  return `${endpointNamed(fault.endpoint, fault.model)}: ${httpAnswer(fault)}`;
}

/**
 * "<role>: model endpoint URL (model M): <what happened>, N attempts": the one line of a model call
 * that failed on every attempt llm.retry allows (sendCompletion.ts's EndpointGaveUp), whatever the
 * kind (a 5xx, a 429 that never cleared, a timeout, no connection). `what` is masked by its maker.
 */
export function gaveUpLine(role: string, endpoint: Pick<ResolvedEndpoint, 'baseURL' | 'model'>, what: string, attempts: number): string {
  return `${role}: ${endpointNamed(endpoint.baseURL, endpoint.model)}: ${what}, ${attempts} attempt${attempts === 1 ? '' : 's'}`;
}

const HINTS: Record<number, string> = {
  401: 'the API key was refused: check the variable named by apiKeyEnv',
  403: 'the API key may not use this endpoint or model',
  404: 'unknown model or wrong base URL',
};

/** A permanent failure of a call: the message says which endpoint, what it answered and what to check. */
export function permanentError(err: APIError, endpoint: ResolvedEndpoint, apiKeyEnv: string): EndpointError {
  const fault = faultOf(err, endpoint);
  const hint = err.code === 'insufficient_quota' ? 'the account is out of quota or credit' : HINTS[fault.status];
  const keyNote = fault.status === 401 || fault.status === 403 ? ` (${apiKeyEnv})` : '';
  return new EndpointError(`${describeFault(fault)}${hint ? ` — ${hint}${keyNote}` : ''}`, fault);
}

/** `err` as an EndpointError when no retry can change it (a refused key, unknown model, spent quota); else `err`. */
export function asPermanent(err: unknown, endpoint: ResolvedEndpoint, apiKeyEnv: string): unknown {
  return classifyFailure(err) === 'permanent' ? permanentError(err as APIError, endpoint, apiKeyEnv) : err;
}
