/**
 * Request dialects: what body a given endpoint + model accepts for a stage's request (a token limit,
 * a temperature, a seed and, for JSON stages, a reply schema). OpenAI's reasoning models are known by
 * name (REASONING_MODELS), so their first request is right. Every other endpoint starts from the plain
 * OpenAI body and learns from its refusals: a 400 naming a parameter the body carries
 * (refusedParameter) is answered by sending the body once more with it renamed, stepped down or
 * dropped (adapt), and the lesson is remembered per endpoint + model (dialectMemory.ts). So an unknown
 * model behind OpenAI's rules works with no config; structured outputs step down json_schema ->
 * json_object -> prompt only (the reply is parsed from the text either way: replyTries.ts). Image
 * parts carry the image's id (`uuid`) for the server's caches except on OpenAI's own services
 * (imageIds.ts); a server refusing it is answered the same way.
 */
import type { APIError } from 'openai';
import type { ChatCompletionCreateParamsNonStreaming, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ReasoningEffort } from 'openai/resources/shared';
import { JSON_ONLY_TEXT } from '../prompts/departures.js';
import { IMAGE_ID_FIELD, isOpenAiService, withImageIds, type ServiceTarget } from './imageIds.js';

/** How a JSON reply is asked for: a schema, any JSON object, or only the prompt's words. */
type StructuredForm = 'json_schema' | 'json_object' | 'prompt';

/** Parameters a dialect can leave out of a body (never the ones a request cannot do without). */
const OMITTABLE = ['temperature', 'top_p', 'seed', 'reasoning_effort'] as const;
type OmittableParam = (typeof OMITTABLE)[number];

/** What was learned from one refusal: the parameter, what is sent instead, and the refusal's words. */
interface Lesson {
  param: string;
  change: string;
  refusal: string;
}

export interface Dialect {
  /** The name the token limit is sent under. */
  tokenLimit: 'max_tokens' | 'max_completion_tokens';
  omit: OmittableParam[];
  structured: StructuredForm;
  /** Known by name from REASONING_MODELS (set by the table, not learned). */
  reasoningModel: boolean;
  /** Image parts carry the image's id (imageIds.ts): off for OpenAI's services, and once a server refuses it. */
  imageIds: boolean;
  /** Learned from the endpoint's refusals, oldest first; empty when the base dialect was never refused. */
  lessons: Lesson[];
}

/**
 * OpenAI's reasoning models (o1, o3, o4-mini, the gpt-5 family but gpt-5-chat): they refuse
 * `max_tokens` ("Use 'max_completion_tokens' instead") and any `temperature` / `top_p` but the
 * default, and take `reasoning_effort` (https://platform.openai.com/docs/guides/reasoning, limitations;
 * https://platform.openai.com/docs/api-reference/chat/create, max_tokens: "not compatible with
 * o-series models"). Known by the name the endpoint is given (an `openai/` style gateway prefix
 * is ignored; dated snapshots such as `o3-2025-04-16` or `gpt-5-mini-2025-08-07` extend the name
 * with `-`). gpt-5-chat(-latest) is the non-reasoning chat model and takes the plain body (as in
 * the Vercel AI SDK's table, packages/openai/src/openai-language-model-capabilities.ts).
 */
const REASONING_MODELS: ReadonlyArray<RegExp> = [/^o1(-|$)/, /^o3(-|$)/, /^o4-mini(-|$)/, /^gpt-5(?!-chat)([.-]|$)/];

export function isReasoningModel(model: string): boolean {
  const name = model.slice(model.lastIndexOf('/') + 1).toLowerCase();
  return REASONING_MODELS.some((pattern) => pattern.test(name));
}

/**
 * The dialect a model starts with: OpenAI's reasoning-model rules for a name in the table, else the
 * plain body; image ids for any server but OpenAI's (`servedBy` absent: none).
 */
export function baseDialect(model: string, servedBy?: ServiceTarget): Dialect {
  const imageIds = servedBy !== undefined && !isOpenAiService(servedBy);
  return isReasoningModel(model)
    ? { tokenLimit: 'max_completion_tokens', omit: ['temperature', 'top_p'], structured: 'json_schema', reasoningModel: true, imageIds, lessons: [] }
    : { tokenLimit: 'max_tokens', omit: [], structured: 'json_schema', reasoningModel: false, imageIds, lessons: [] };
}

/** What a stage asks of one request, before any dialect. */
export interface StageAsk {
  model: string;
  messages: ChatCompletionMessageParam[];
  temperature: number;
  maxTokens: number;
  seed?: number;
  /** The schema of a JSON reply (absent: prose, or structured output turned off). */
  schema?: { name: string; schema: Record<string, unknown> };
  reasoningEffort?: Exclude<ReasoningEffort, null>;
  /** The id of the image the messages carry (imageIds.ts), sent where the dialect sends ids. */
  imageId?: string;
}

const JSON_ONLY: ChatCompletionMessageParam = { role: 'system', content: JSON_ONLY_TEXT };

/** The body `ask` becomes in `dialect`. */
export function requestBody(ask: StageAsk, dialect: Dialect): ChatCompletionCreateParamsNonStreaming {
  const omitted = new Set<string>(dialect.omit);
  // Without a schema the format is asked for in words: OpenAI's json_object mode also insists the
  // messages say "JSON" (https://platform.openai.com/docs/guides/structured-outputs#json-mode).
  const asked = ask.imageId !== undefined && dialect.imageIds ? withImageIds(ask.messages, ask.imageId) : ask.messages;
  const messages = ask.schema && dialect.structured !== 'json_schema' ? [JSON_ONLY, ...asked] : asked;
  const body: ChatCompletionCreateParamsNonStreaming = { model: ask.model, messages };
  if (!omitted.has('temperature')) body.temperature = ask.temperature;
  body[dialect.tokenLimit] = ask.maxTokens;
  if (ask.seed !== undefined && !omitted.has('seed')) body.seed = ask.seed;
  if (ask.reasoningEffort !== undefined && !omitted.has('reasoning_effort')) body.reasoning_effort = ask.reasoningEffort;
  // No `strict`: OpenAI then takes the schema as guidance and does not hold it to strict mode's
  // subset of keywords (openai-node src/resources/shared.ts ResponseFormatJSONSchema.strict), which
  // would refuse the constraint schema's `minLength`; grammar servers enforce it either way
  // (prompts/constraintPrompt.ts). The reply is parsed by its zod schema either way (replyTries.ts).
  if (ask.schema && dialect.structured === 'json_schema') body.response_format = { type: 'json_schema', json_schema: ask.schema };
  if (ask.schema && dialect.structured === 'json_object') body.response_format = { type: 'json_object' };
  return body;
}

/**
 * The parameter of `body` a 400 refuses, if it names one:
 * - OpenAI (`unsupported_parameter` / `unsupported_value` with `param`, e.g. `{"error": {"code":
 *   "unsupported_parameter", "param": "max_tokens", ...}}`), vLLM and SGLang (their ErrorResponse
 *   carries `param`: vllm-project/vllm vllm/entrypoints/openai/protocol.py, sgl-project/sglang
 *   python/sglang/srt/entrypoints/openai/protocol.py) name it in `param`, possibly as a path
 *   (`response_format.json_schema`);
 * - Gemini's OpenAI-compatible endpoint answers a field it does not know with google.rpc.BadRequest
 *   `Invalid JSON payload received. Unknown name "seed": Cannot find field.`
 *   (https://ai.google.dev/gemini-api/docs/openai; body seen in Alishahryar1/free-claude-code#542);
 * - llama.cpp's server (`{"error": {"code": 400, "message": ..., "type": "invalid_request_error"}}`,
 *   tools/server/server-common.cpp format_error_response) refuses an unknown response_format type
 *   with `response_format type must be one of "text" or "json_object", but got: json_schema` (older
 *   builds; oaicompat_chat_params_parse);
 * - Ollama's OpenAI layer (ollama/ollama openai/openai.go NewError: `param` and `code` always null)
 *   and Anthropic's OpenAI SDK compatibility (https://docs.claude.com/en/api/openai-sdk: errors in
 *   Anthropic's `{"type": "error", "error": {"type": "invalid_request_error", "message": ...}}`) name
 *   the field only in the message.
 * So: `param` when it names a top-level key of the body (or, for the image id, ends a path into the
 * messages: vLLM's pydantic errors give `messages.0.content.0.uuid`), else the first such key the
 * message names as a word. Only parameters a dialect can change count (never `messages` or `model`).
 */
export function refusedParameter(err: Pick<APIError, 'param' | 'message'>, body: ChatCompletionCreateParamsNonStreaming): string | undefined {
  // A prompt too long for the context names the token limit too (vLLM: "'max_tokens' or
  // 'max_completion_tokens' is too large"): that is this request's size, not the parameter's name.
  const overflow = CONTEXT_OVERFLOW.test(err.message);
  const sent = Object.keys(body).filter((key) => isAdaptable(key) && !(overflow && TOKEN_LIMITS.has(key)));
  // The image id is a field of a content part: a path to it names it last (`messages.0.content.0.uuid`).
  if (carriesImageIds(body)) sent.push(IMAGE_ID_FIELD);
  const path = typeof err.param === 'string' ? err.param.split(/[.[\]]/).filter(Boolean) : [];
  const param = path[0] === 'messages' ? path.at(-1) : path[0];
  if (param !== undefined && sent.includes(param)) return param;
  const message = err.message;
  let first: { key: string; at: number } | undefined;
  for (const key of sent) {
    const at = message.search(new RegExp(`(^|[^A-Za-z0-9_])${key}([^A-Za-z0-9_]|$)`));
    if (at >= 0 && (first === undefined || at < first.at)) first = { key, at };
  }
  return first?.key;
}

const CONTEXT_OVERFLOW = /context length|context window|too large|too long|exceeds? the/i;
const TOKEN_LIMITS: ReadonlySet<string> = new Set(['max_tokens', 'max_completion_tokens']);

function carriesImageIds(body: ChatCompletionCreateParamsNonStreaming): boolean {
  return body.messages.some((m) => Array.isArray(m.content) && m.content.some((part) => IMAGE_ID_FIELD in part));
}

function isAdaptable(key: string): boolean {
  return key === 'max_tokens' || key === 'max_completion_tokens' || key === 'response_format' || (OMITTABLE as readonly string[]).includes(key);
}

/**
 * The dialect that answers a refusal of `param`, or undefined when there is nothing left to try
 * for it: then the refusal stands. The token limit's name is switched once (an endpoint refusing
 * both names is refused for something else), the response format steps down until prompt only,
 * and an omittable parameter is dropped.
 */
export function adapt(dialect: Dialect, param: string, refusal: string): Dialect | undefined {
  const learn = (change: string, next: Partial<Dialect>): Dialect => ({ ...dialect, ...next, lessons: [...dialect.lessons, { param, change, refusal }] });
  if (param === 'max_tokens' || param === 'max_completion_tokens') {
    if (dialect.lessons.some((l) => l.param === 'max_tokens' || l.param === 'max_completion_tokens')) return undefined;
    const other = param === 'max_tokens' ? 'max_completion_tokens' : 'max_tokens';
    return learn(`sends ${other} instead`, { tokenLimit: other });
  }
  if (param === 'response_format') {
    if (dialect.structured === 'json_schema') return learn('asks for json_object instead of json_schema', { structured: 'json_object' });
    if (dialect.structured === 'json_object') return learn('asks for JSON in the prompt only (no response_format)', { structured: 'prompt' });
    return undefined;
  }
  if (param === IMAGE_ID_FIELD) return dialect.imageIds ? learn('sends no image id', { imageIds: false }) : undefined;
  const omittable = OMITTABLE.find((p) => p === param);
  if (omittable !== undefined && !dialect.omit.includes(omittable)) return learn(`sends no ${param}`, { omit: [...dialect.omit, omittable] });
  return undefined;
}

/** The lessons of a dialect in one line each ("response_format: asks for json_object ... (refused: ...)"). */
export function describeLessons(dialect: Dialect): string[] {
  return dialect.lessons.map((l) => `${l.param}: ${l.change} (the endpoint answered: ${l.refusal})`);
}
