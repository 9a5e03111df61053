/**
 * Every model call of the pipeline goes through here. It
 *  - renders a prompt into OpenAI chat messages (the image as a base64 data URL part),
 *  - answers from the object-store cache when the identical request was made before, so a retried
 *    activity or a re-run build never pays twice,
 *  - validates JSON replies with zod, asking once for a repair before rejecting the sample,
 *  - turns client errors (400-class, content filter) into sample rejections and lets transient
 *    ones (429, 5xx, timeouts; already retried by the SDK) fail the activity so Temporal retries.
 */
import OpenAI from 'openai';
import { z } from 'zod';
import type { ChatCompletionContentPart, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { BuildConfig, EndpointConfig, Stage } from '../config/buildConfig.js';
import { canonicalJson } from '../config/buildConfig.js';
import type { RenderedPrompt } from '../prompts/chat.js';
import { SampleRejection } from '../domain/rejection.js';
import { sha256Hex } from '../domain/hashing.js';
import { getJson, putJson, type ObjectStore } from '../storage/objectStore.js';
import { clientFor, resolveEndpoint } from './endpoint.js';

export interface CallRecord {
  stage: Stage;
  model: string;
  promptTokens: number;
  completionTokens: number;
  /** Served from the cache: made (and paid) by an earlier attempt or build. */
  cached: boolean;
  /** The endpoint identified itself as the mmif simulator. */
  simulated: boolean;
}

export interface ModelRequest {
  stage: Stage;
  endpoint: EndpointConfig;
  prompt: RenderedPrompt;
  image?: { jpeg: Buffer; sha256: string };
  /** Overrides llm.temperature (judges run at llm.judgeTemperature). */
  temperature?: number;
  /**
   * The OpenAI `seed`: set on regenerations, so a second attempt is a different request (and a
   * different cache entry) rather than the cached first answer again.
   */
  seed?: number;
}

interface CachedReply {
  content: string;
  finishReason: string;
  model: string;
  promptTokens: number;
  completionTokens: number;
  simulated: boolean;
}

const SIMULATOR_FINGERPRINT = 'mmif-simulator';
const REJECTING_STATUSES = new Set([400, 413, 422]);

export class ModelCaller {
  constructor(
    private readonly cache: ObjectStore,
    private readonly cachePrefix: string,
    private readonly llm: BuildConfig['llm'],
  ) {}

  /** A prose reply. A reply cut by the token limit or a content filter rejects the sample. */
  async text(req: ModelRequest, calls: CallRecord[]): Promise<string> {
    const reply = await this.complete(req, req.prompt.messages.map((m) => this.toMessage(m, req)), undefined, calls);
    if (reply.finishReason === 'length') throw new SampleRejection(`${req.stage}: truncated reply (finish_reason length)`);
    if (!reply.content.trim()) throw new SampleRejection(`${req.stage}: empty reply`);
    return reply.content;
  }

  /** A JSON reply validated by `schema`; one repair round trip, then the sample is rejected. */
  async json<T>(req: ModelRequest, schemaName: string, schema: z.ZodType<T>, calls: CallRecord[]): Promise<T> {
    const format = this.llm.structuredOutput
      ? { type: 'json_schema' as const, json_schema: { name: schemaName, schema: z.toJSONSchema(schema) as Record<string, unknown> } }
      : undefined;
    const messages = req.prompt.messages.map((m) => this.toMessage(m, req));
    let reply = await this.complete(req, messages, format, calls);
    let parsed = parseJsonReply(reply, schema);
    if (parsed.ok) return parsed.value;
    const repair: ChatCompletionMessageParam[] = [
      ...messages,
      { role: 'assistant', content: reply.content },
      {
        role: 'user',
        content: `Your reply could not be used (${parsed.error}). Reply again with only the complete JSON object in the required format, and nothing else.`,
      },
    ];
    reply = await this.complete(req, repair, format, calls);
    parsed = parseJsonReply(reply, schema);
    if (parsed.ok) return parsed.value;
    throw new SampleRejection(`${req.stage}: invalid-json after repair: ${parsed.error}`);
  }

  private toMessage(m: RenderedPrompt['messages'][number], req: ModelRequest): ChatCompletionMessageParam {
    if (!m.withImage || !req.image) return { role: m.role, content: m.text } as ChatCompletionMessageParam;
    const parts: ChatCompletionContentPart[] = [
      {
        type: 'image_url',
        image_url: { url: `data:image/jpeg;base64,${req.image.jpeg.toString('base64')}`, detail: this.llm.imageDetail },
      },
      { type: 'text', text: m.text },
    ];
    return { role: 'user', content: parts };
  }

  private async complete(
    req: ModelRequest,
    messages: ChatCompletionMessageParam[],
    responseFormat: OpenAI.ChatCompletionCreateParams['response_format'] | undefined,
    calls: CallRecord[],
  ): Promise<CachedReply> {
    const endpoint = resolveEndpoint(req.endpoint);
    const params = {
      model: endpoint.model,
      messages,
      temperature: req.temperature ?? this.llm.temperature,
      max_tokens: this.llm.maxTokens,
      ...(req.seed !== undefined ? { seed: req.seed } : {}),
      ...(responseFormat ? { response_format: responseFormat } : {}),
    };
    const key = `${this.cachePrefix}/${this.cacheKey(endpoint.baseURL, params, req)}.json`;
    const hit = await getJson<CachedReply>(this.cache, key);
    if (hit) {
      calls.push(record(req.stage, hit, true));
      return hit;
    }
    let completion: OpenAI.ChatCompletion;
    try {
      completion = await clientFor(endpoint, this.llm.timeoutMs).chat.completions.create(params);
    } catch (err) {
      if (err instanceof OpenAI.APIError && err.status !== undefined && REJECTING_STATUSES.has(err.status)) {
        throw new SampleRejection(`${req.stage}: endpoint refused the request (HTTP ${err.status}): ${err.message}`);
      }
      throw err;
    }
    const choice = completion.choices[0];
    if (choice?.finish_reason === 'content_filter') throw new SampleRejection(`${req.stage}: content filter refused the reply`);
    const reply: CachedReply = {
      content: choice?.message.content ?? '',
      finishReason: choice?.finish_reason ?? 'unknown',
      model: completion.model || endpoint.model,
      promptTokens: completion.usage?.prompt_tokens ?? 0,
      completionTokens: completion.usage?.completion_tokens ?? 0,
      simulated: completion.system_fingerprint === SIMULATOR_FINGERPRINT,
    };
    await putJson(this.cache, key, reply);
    calls.push(record(req.stage, reply, false));
    return reply;
  }

  /** Endpoint + model + full request + template version; the image enters by its hash, not its bytes. */
  private cacheKey(baseURL: string, params: { messages: ChatCompletionMessageParam[] } & Record<string, unknown>, req: ModelRequest): string {
    const imageUrl = req.image ? `data:image/jpeg;base64,${req.image.jpeg.toString('base64')}` : undefined;
    const material = canonicalJson({
      baseURL,
      promptVersion: req.prompt.version,
      imageSha256: req.image?.sha256,
      detail: this.llm.imageDetail,
      params: {
        ...params,
        messages: JSON.parse(JSON.stringify(params.messages), (_k, v: unknown) => (v === imageUrl ? '<image>' : v)),
      },
    });
    const hash = sha256Hex(material);
    return `${hash.slice(0, 2)}/${hash}`;
  }
}

function record(stage: Stage, reply: CachedReply, cached: boolean): CallRecord {
  return {
    stage,
    model: reply.model,
    promptTokens: reply.promptTokens,
    completionTokens: reply.completionTokens,
    cached,
    simulated: reply.simulated,
  };
}

type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

/** Accepts bare JSON or JSON inside a markdown fence (models without structured output add one). */
export function parseJsonReply<T>(reply: { content: string; finishReason: string }, schema: z.ZodType<T>): Parsed<T> {
  if (reply.finishReason === 'length') return { ok: false, error: 'the reply was cut off by the token limit' };
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(reply.content);
  const text = (fenced ? fenced[1]! : reply.content).trim();
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    return { ok: false, error: `not valid JSON: ${(err as Error).message}` };
  }
  const result = schema.safeParse(data);
  if (!result.success) {
    return { ok: false, error: `JSON does not match the schema: ${result.error.issues.map((i) => `${i.path.join('.') || '(root)'} ${i.message}`).join('; ')}` };
  }
  return { ok: true, value: result.data };
}
