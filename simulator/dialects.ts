/**
 * The simulator speaking other servers' dialects (SIM_DIALECT for every model, or per model with
 * SIM_MODEL_DIALECTS=model=dialect,...), each as that server documents or implements it (the
 * sources are cited at each dialect below).
 */
import { HttpError } from './http.js';
import type { ChatRequest } from './replies.js';
import { imageIdOfPart } from '../llm/imageIds.js';

export const SIM_DIALECTS = [
  /** The OpenAI chat completions API as the engine sends it (the default). */
  'plain',
  /**
   * OpenAI's reasoning models (o-series, gpt-5). `max_tokens` is refused with 400 unsupported_parameter
   * ("Use 'max_completion_tokens' instead"), a `temperature` or `top_p` other than 1 with 400
   * unsupported_value, both naming the parameter in `param`
   * (https://platform.openai.com/docs/guides/reasoning, limitations; the bodies as OpenAI sends them are
   * quoted in openhab/openhab-addons#21459 and in zenn.dev/headwaters/articles/a5468c45ec2e52). The model
   * thinks before answering: the thinking is not returned but billed, as
   * usage.completion_tokens_details.reasoning_tokens, inside completion_tokens
   * (https://platform.openai.com/docs/api-reference/chat/object).
   */
  'openai-reasoning',
  /**
   * A thinking model served without a reasoning parser (vLLM without --reasoning-parser, llama.cpp's
   * server with --reasoning-format none: the thinking stays in `content` between <think> and </think>,
   * https://docs.vllm.ai/en/latest/features/reasoning_outputs.html, ggml-org/llama.cpp
   * tools/server/README.md). The thinking counts against the token limit: a small limit cuts the reply
   * inside an unterminated <think>.
   */
  'inline-think',
  /**
   * The same model behind a reasoning parser: the thinking is returned apart in
   * `message.reasoning_content` (vLLM --reasoning-parser, llama.cpp --reasoning-format deepseek,
   * DeepSeek's API: https://api-docs.deepseek.com/guides/reasoning_model).
   */
  'reasoning-content',
  /**
   * A server that knows json_object but not json_schema: llama.cpp's server before json_schema support
   * refused it with 400 `response_format type must be one of "text" or "json_object", but got:
   * json_schema` in its own error body `{"error": {"code": 400, "message": ..., "type":
   * "invalid_request_error"}}` (tools/server/server-common.cpp oaicompat_chat_params_parse and
   * format_error_response).
   */
  'no-json-schema',
  /**
   * A server whose schema refuses a field it does not know on a content part, the image id
   * (llm/imageIds.ts) included: Gemini's OpenAI-compatible endpoint answers such a field with
   * google.rpc.BadRequest `Invalid JSON payload received. Unknown name "uuid" at 'messages[0].content[0]':
   * Cannot find field.` in a list body (https://ai.google.dev/gemini-api/docs/openai; the form as for
   * `seed` in Alishahryar1/free-claude-code#542).
   */
  'no-image-ids',
  /**
   * A captive portal or login proxy between the engine and the endpoint, answering every request with 200
   * and an HTML page (RFC 6585 section 6 describes such interception).
   */
  'html-proxy',
] as const;
export type SimDialect = (typeof SIM_DIALECTS)[number];

/**
 * An error in the body shape a server really sends (not every server wraps OpenAI's `{error: {message,
 * type, param, code}}`).
 */
export class ServerError extends HttpError {
  constructor(
    status: number,
    message: string,
    private readonly raw: unknown,
  ) {
    super(status, message);
  }

  override body() {
    return this.raw as ReturnType<HttpError['body']>;
  }
}

/** The dialect a request is answered in: the model's own, else the simulator-wide one. */
export function dialectFor(config: { dialect: SimDialect; modelDialects: Record<string, SimDialect> }, model: string): SimDialect {
  return config.modelDialects[model] ?? config.dialect;
}

/** Throws the refusal the dialect's server answers this request with, if it refuses it. */
export function refuseInDialect(dialect: SimDialect, request: ChatRequest): void {
  if (dialect === 'openai-reasoning') {
    if (request.max_tokens != null) {
      throw openaiRefusal("Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", 'max_tokens', 'unsupported_parameter');
    }
    for (const param of ['temperature', 'top_p'] as const) {
      const value = (request as Record<string, unknown>)[param];
      if (value != null && value !== 1) {
        throw openaiRefusal(
          `Unsupported value: '${param}' does not support ${String(value)} with this model. Only the default (1) value is supported.`,
          param,
          'unsupported_value',
        );
      }
    }
  }
  if (dialect === 'no-image-ids') {
    for (const [m, message] of request.messages.entries()) {
      const parts = Array.isArray(message.content) ? message.content : [];
      const at = parts.findIndex((part) => imageIdOfPart(part) !== undefined);
      if (at < 0) continue;
      const message400 = `Invalid JSON payload received. Unknown name "uuid" at 'messages[${m}].content[${at}]': Cannot find field.`;
      throw new ServerError(400, message400, [{ error: { code: 400, message: message400, status: 'INVALID_ARGUMENT' } }]);
    }
  }
  if (dialect === 'no-json-schema' && request.response_format?.type === 'json_schema') {
    const message = `response_format type must be one of "text" or "json_object", but got: json_schema`;
    throw new ServerError(400, message, { error: { code: 400, message, type: 'invalid_request_error' } });
  }
}

function openaiRefusal(message: string, param: string, code: string): HttpError {
  return new HttpError(400, message, 'invalid_request_error', code, {}, param);
}

/** How the dialect's model thinks: returned inline, apart, hidden (only billed), or not at all. */
export type Thinking = 'inline' | 'apart' | 'hidden' | 'none';

export function thinkingOf(dialect: SimDialect): Thinking {
  if (dialect === 'inline-think') return 'inline';
  if (dialect === 'reasoning-content') return 'apart';
  if (dialect === 'openai-reasoning') return 'hidden';
  return 'none';
}

/** What a thinking model writes before its answer (a few sentences, the same for the same request). */
export function thoughtsFor(requestKey: string): string {
  const steps = [
    'Let me look at the image first.',
    'The task asks for a reply in a given form.',
    'I should check each constraint before I answer.',
    'I will keep the answer to what the image shows.',
  ];
  const start = parseInt(requestKey.slice(0, 2), 16) % steps.length;
  return [...steps.slice(start), ...steps.slice(0, start)].join(' ');
}

/** The page a captive portal answers with instead of the API's JSON. */
export const PORTAL_PAGE = `<!DOCTYPE html>
<html><head><title>Network login</title></head>
<body><h1>Sign in to continue</h1><form method="post" action="/login"><input name="user"><input name="password" type="password"><button>Sign in</button></form></body></html>
`;
