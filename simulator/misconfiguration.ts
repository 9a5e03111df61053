/**
 * Endpoint misconfiguration, as a real provider answers it (admin faults, off by default): a key the
 * endpoint does not accept (401, echoing the key as some proxies do), a model it does not serve
 * (404 model_not_found), an account out of credit (429 insufficient_quota), a text-only model sent
 * an image (400), and an endpoint that refuses every request (rate400, drawn per attempt in
 * faults.ts). These let tests show that permanent errors fail fast and name the endpoint.
 */
import type { IncomingMessage } from 'node:http';
import type { FaultConfig } from './faults.js';
import { HttpError } from './http.js';
import type { ChatRequest } from './replies.js';

/** Every /v1 route (chat, files, batches, models) refuses a key other than `requiredApiKey`. */
export function checkKey(config: FaultConfig, req: IncomingMessage): void {
  if (!config.requiredApiKey) return;
  const key = presentedKey(req);
  if (key !== config.requiredApiKey) {
    throw new HttpError(
      401,
      `Incorrect API key provided: ${key}. You can find your API key at https://platform.openai.com/account/api-keys.`,
      'invalid_request_error',
      'invalid_api_key',
    );
  }
}

/** A chat error as an endpoint that echoes the key answers it (echoKeyInErrors); other errors as they are. */
export function echoingKey(config: FaultConfig, req: IncomingMessage, err: unknown): unknown {
  if (!config.echoKeyInErrors || !(err instanceof HttpError)) return err;
  const key = presentedKey(req);
  return new HttpError(err.status, `${err.message} (request key: ${key})`, err.type, err.code, err.headers, err.param);
}

/** The key a request carries: OpenAI's `Authorization: Bearer`, or Azure OpenAI's `api-key` header. */
function presentedKey(req: IncomingMessage): string {
  const azureKey = req.headers['api-key'];
  if (typeof azureKey === 'string') return azureKey;
  return /^Bearer (.*)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
}

/** Throws the provider's error for a chat request the endpoint's setup refuses; returns when none applies. */
export function checkChat(config: FaultConfig, request: Pick<ChatRequest, 'model' | 'messages'>): void {
  if (config.knownModels.length > 0 && !config.knownModels.includes(request.model)) {
    throw new HttpError(404, `The model \`${request.model}\` does not exist or you do not have access to it.`, 'invalid_request_error', 'model_not_found', {}, 'model');
  }
  if (config.insufficientQuota) {
    throw new HttpError(429, 'You exceeded your current quota, please check your plan and billing details.', 'insufficient_quota', 'insufficient_quota');
  }
  if (config.textOnlyModels.includes(request.model) && sendsImage(request)) {
    throw new HttpError(
      400,
      `Invalid content type. image_url is only supported by certain models; \`${request.model}\` accepts text only.`,
      'invalid_request_error',
      null,
      {},
      'messages',
    );
  }
}

function sendsImage(request: Pick<ChatRequest, 'messages'>): boolean {
  return request.messages.some((m) => Array.isArray(m.content) && m.content.some((part) => part.type === 'image_url'));
}
