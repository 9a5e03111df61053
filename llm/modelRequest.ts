/**
 * A stage's model request and the chat-completion body it becomes in the endpoint's dialect, filed
 * under its cache key. The synchronous path sends the body; the Batch API sends the same body (a
 * PreparedRequest) and files the reply under the same key, so the pipeline then runs on cache hits.
 */
import { requestEstimate, type RequestEstimate } from './tokenEstimate.js';
import type { z } from 'zod';
import type { ChatCompletionCreateParamsNonStreaming, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { BuildConfig } from '../config/buildConfig.js';
import type { EndpointConfig, ModelRole } from '../config/modelsConfig.js';
import type { PromptKind } from '../domain/promptKinds.js';
import type { RenderedPrompt } from '../prompts/chat.js';
import { jsonSchemaOf, type MessageImage } from './chatMessages.js';
import { requestBody, type Dialect, type StageAsk } from './dialect.js';
import { resolveEndpoint } from './endpoint.js';
import { imageIdOf } from './imageIds.js';
import { replyCacheKey } from './replyCache.js';
import { trySeed, type ReplyTry } from './replyTries.js';

export interface ModelRequest {
  /** The model role, which picks the endpoint; named `stage` like the stored CallRecord field it fills (callRecord.ts). */
  stage: ModelRole;
  endpoint: EndpointConfig;
  prompt: RenderedPrompt;
  image?: MessageImage;
  /** Overrides llm.temperature (judges run at llm.judgeTemperature). */
  temperature?: number;
  /**
   * The OpenAI `seed`: set on regenerations, so a second attempt is a different request (and a
   * different cache entry) rather than the cached first answer again.
   */
  seed?: number;
}

/** Asks for a JSON reply matching `schema`, sent as response_format `name` when structured output is on. */
export interface JsonReply<T> {
  name: string;
  schema: z.ZodType<T>;
}

/** Where a reply obtained elsewhere goes: small, so it can be kept between submitting a batch and collecting it. */
export interface ReplyTarget {
  /** The model role; `stage` on the wire: a batch's targets are stored between submitting and collecting it. */
  stage: ModelRole;
  /** Where the synchronous path looks for this request's reply (an object-store key). */
  cacheKey: string;
  model: string;
  /** What the request could use at most: a reply's reported usage is checked against it (usage.ts). */
  estimate: RequestEstimate;
}

/** A request of a stage, ready to send (the Batch API sends first requests instead of the synchronous path). */
export interface PreparedRequest extends ReplyTarget {
  /** What it asks for (its prompt's kind): sent beside the body, never in it (sendCompletion.ts, batch.ts). */
  kind: PromptKind;
  body: ChatCompletionCreateParamsNonStreaming;
}

/** The schema a JSON reply is asked for with, or none when llm.structuredOutput is off (the prompt alone asks). */
export function replySchema<T>(json: JsonReply<T> | undefined, llm: BuildConfig['llm']): StageAsk['schema'] {
  if (!json || !llm.structuredOutput) return undefined;
  return { name: json.name, schema: jsonSchemaOf(json.schema) };
}

/**
 * The body one try of `req` sends with these messages in the endpoint's dialect (dialect.ts), and
 * the cache key its reply is filed under.
 */
export function prepareRequest(
  req: ModelRequest,
  t: ReplyTry,
  messages: ChatCompletionMessageParam[],
  schema: StageAsk['schema'],
  dialect: Dialect,
  llm: BuildConfig['llm'],
  cachePrefix: string,
): PreparedRequest {
  const endpoint = resolveEndpoint(req.endpoint);
  const seed = trySeed(req.seed, t);
  const body = requestBody(
    {
      model: endpoint.model,
      messages,
      temperature: req.temperature ?? llm.temperature,
      maxTokens: t.maxTokens,
      ...(seed !== undefined ? { seed } : {}),
      ...(schema ? { schema } : {}),
      ...(req.endpoint.reasoningEffort ? { reasoningEffort: req.endpoint.reasoningEffort } : {}),
      ...(req.image ? { imageId: imageIdOf(req.image.sha256, llm.imageIdSaltEnv) } : {}),
    },
    dialect,
  );
  const cacheKey = `${cachePrefix}/${replyCacheKey(endpoint.baseURL, body, req, llm.imageDetail, t.index)}.json`;
  return { stage: req.stage, kind: req.prompt.kind, cacheKey, model: endpoint.model, body, estimate: requestEstimate(body) };
}
