/**
 * Every model call of the pipeline goes through here. It
 *  - renders a prompt into OpenAI chat messages (the image as a base64 data URL part),
 *  - answers from the object-store cache when the identical request was made before, so a retried
 *    activity or a re-run build never pays twice,
 *  - sends through the endpoint's worker-wide limiter (limiter.ts) and retries there: 429s wait
 *    for the paused endpoint, 5xx / connection errors / timeouts back off with jitter, and after
 *    the last attempt the error fails the activity so Temporal retries it,
 *  - validates JSON replies with zod, asking once for a repair before rejecting the sample,
 *  - turns client errors (400-class, content filter) into sample rejections,
 *  - prices every call (pricing.ts), and
 *  - for the Batch API, prepares request bodies with their cache keys and stores batch replies
 *    where the synchronous path will find them.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import OpenAI, { APIError } from 'openai';
import { z } from 'zod';
import type {
  ChatCompletion,
  ChatCompletionContentPart,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import type { BuildConfig, EndpointConfig, Stage } from '../config/buildConfig.js';
import { canonicalJson } from '../config/buildConfig.js';
import type { RenderedPrompt } from '../prompts/chat.js';
import { SampleRejection } from '../domain/rejection.js';
import { sha256Hex } from '../domain/hashing.js';
import { getJson, putJson, type ObjectStore } from '../storage/objectStore.js';
import { clientFor, resolveEndpoint, type ResolvedEndpoint } from './endpoint.js';
import { DEFAULT_CONCURRENCY, limiterFor, type EndpointLimits, type Ticket } from './limiter.js';
import { DEFAULT_PRICES, costOf, type PriceTable } from './pricing.js';
import { DEFAULT_RETRY_POLICY, backoffMs, classifyFailure, type RetryPolicy } from './retryPolicy.js';
import { estimateRequestTokens } from './tokenEstimate.js';

export interface CallRecord {
  stage: Stage;
  model: string;
  promptTokens: number;
  completionTokens: number;
  /** Served from the cache: made (and paid) by an earlier attempt or build. */
  cached: boolean;
  /** The endpoint identified itself as the mmif simulator. */
  simulated: boolean;
  /** USD this call cost now: 0 for a cache hit (see pricing.ts for unknown models). */
  costUsd: number;
  /** USD a cache hit did not pay again: what the call that filled the cache cost. 0 otherwise. */
  savedUsd: number;
  /** Made through the Batch API (for a cache hit: the cached reply was), priced with its discount. */
  batch: boolean;
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

export interface ModelCallerOptions {
  /** Limits of the endpoint a stage calls; default: DEFAULT_CONCURRENCY in flight, no rate limits. */
  limits?: (endpoint: EndpointConfig) => EndpointLimits;
  /** Per-model prices, over DEFAULT_PRICES. */
  prices?: PriceTable;
  retry?: Partial<RetryPolicy>;
}

/** Where a reply obtained elsewhere goes: small, so it can be kept between submitting a batch and collecting it. */
export interface ReplyTarget {
  stage: Stage;
  /** Where the synchronous path looks for this request's reply (an object-store key). */
  cacheKey: string;
  model: string;
}

/** A first request of a stage, ready to send through the Batch API instead of the synchronous path. */
export interface PreparedRequest extends ReplyTarget {
  body: ChatCompletionCreateParamsNonStreaming;
}

/** Asks for a JSON reply matching `schema`, sent as response_format `name` when structured output is on. */
export interface JsonReply<T> {
  name: string;
  schema: z.ZodType<T>;
}

interface CachedReply {
  content: string;
  finishReason: string;
  model: string;
  promptTokens: number;
  completionTokens: number;
  simulated: boolean;
  /** Absent in entries written before the Batch API was supported. */
  batch?: boolean;
}

type ResponseFormat = ChatCompletionCreateParamsNonStreaming['response_format'];

const SIMULATOR_FINGERPRINT = 'mmif-simulator';

export class ModelCaller {
  private readonly limits: (endpoint: EndpointConfig) => EndpointLimits;
  private readonly prices: PriceTable;
  private readonly retry: RetryPolicy;

  constructor(
    private readonly cache: ObjectStore,
    private readonly cachePrefix: string,
    private readonly llm: BuildConfig['llm'],
    options: ModelCallerOptions = {},
  ) {
    this.limits = options.limits ?? (() => ({ concurrency: DEFAULT_CONCURRENCY }));
    this.prices = { ...DEFAULT_PRICES, ...options.prices };
    this.retry = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  }

  /** A prose reply. A reply cut by the token limit or a content filter rejects the sample. */
  async text(req: ModelRequest, calls: CallRecord[]): Promise<string> {
    const reply = await this.complete(req, this.messages(req), undefined, calls);
    if (reply.finishReason === 'length') throw new SampleRejection(`${req.stage}: truncated reply (finish_reason length)`);
    if (!reply.content.trim()) throw new SampleRejection(`${req.stage}: empty reply`);
    return reply.content;
  }

  /** A JSON reply validated by `schema`; one repair round trip, then the sample is rejected. */
  async json<T>(req: ModelRequest, schemaName: string, schema: z.ZodType<T>, calls: CallRecord[]): Promise<T> {
    const format = this.responseFormat({ name: schemaName, schema });
    const messages = this.messages(req);
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

  /**
   * The request text() (no `json`) or json() would send first, without sending it: the Batch API
   * sends `body` instead, and storeReply files the answer under `cacheKey`, so the pipeline then
   * runs on cache hits. Repair round trips are not prepared: they go through the synchronous path.
   */
  prepare<T>(req: ModelRequest, json?: JsonReply<T>): PreparedRequest {
    return this.build(req, this.messages(req), json && this.responseFormat(json)).prepared;
  }

  /**
   * Caches a reply obtained elsewhere (a Batch API result for a prepared body) and returns its call
   * record, priced as a batch call when `batch`. An entry already there is kept: the pipeline may
   * have used it.
   */
  async storeReply(target: ReplyTarget, completion: ChatCompletion, batch = true): Promise<CallRecord> {
    const reply = toCachedReply(completion, target.model, batch);
    await this.cache.putIfAbsent(target.cacheKey, JSON.stringify(reply), 'application/json');
    return this.record(target.stage, reply, false);
  }

  /** Whether a reply is cached under this key (prepared requests carry their key). */
  isCached(cacheKey: string): Promise<boolean> {
    return this.cache.exists(cacheKey);
  }

  /** The SDK client of an endpoint, for the Batch API helpers (batch.ts). */
  client(endpoint: EndpointConfig): OpenAI {
    return clientFor(resolveEndpoint(endpoint), this.llm.timeoutMs);
  }

  private messages(req: ModelRequest): ChatCompletionMessageParam[] {
    return req.prompt.messages.map((m) => this.toMessage(m, req));
  }

  private responseFormat<T>(json: JsonReply<T>): ResponseFormat {
    if (!this.llm.structuredOutput) return undefined;
    return { type: 'json_schema', json_schema: { name: json.name, schema: z.toJSONSchema(json.schema) as Record<string, unknown> } };
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

  private build(
    req: ModelRequest,
    messages: ChatCompletionMessageParam[],
    responseFormat: ResponseFormat,
  ): { endpoint: ResolvedEndpoint; prepared: PreparedRequest } {
    const endpoint = resolveEndpoint(req.endpoint);
    const body: ChatCompletionCreateParamsNonStreaming = {
      model: endpoint.model,
      messages,
      temperature: req.temperature ?? this.llm.temperature,
      max_tokens: this.llm.maxTokens,
      ...(req.seed !== undefined ? { seed: req.seed } : {}),
      ...(responseFormat ? { response_format: responseFormat } : {}),
    };
    const cacheKey = `${this.cachePrefix}/${this.cacheKey(endpoint.baseURL, body, req)}.json`;
    return { endpoint, prepared: { stage: req.stage, cacheKey, model: endpoint.model, body } };
  }

  private async complete(
    req: ModelRequest,
    messages: ChatCompletionMessageParam[],
    responseFormat: ResponseFormat,
    calls: CallRecord[],
  ): Promise<CachedReply> {
    const { endpoint, prepared } = this.build(req, messages, responseFormat);
    let reply = await getJson<CachedReply>(this.cache, prepared.cacheKey);
    if (reply) {
      calls.push(this.record(req.stage, reply, true));
    } else {
      reply = toCachedReply(await this.send(req, endpoint, prepared.body), endpoint.model, false);
      await putJson(this.cache, prepared.cacheKey, reply);
      calls.push(this.record(req.stage, reply, false));
    }
    // Checked after caching: a retried activity is refused again without paying for it again.
    if (reply.finishReason === 'content_filter') throw new SampleRejection(`${req.stage}: content filter refused the reply`);
    return reply;
  }

  /** One call, attempted until it succeeds, is refused, or runs out of attempts (see retryPolicy.ts). */
  private async send(req: ModelRequest, endpoint: ResolvedEndpoint, body: ChatCompletionCreateParamsNonStreaming): Promise<ChatCompletion> {
    const limiter = limiterFor(endpoint, this.limits(req.endpoint));
    const client = clientFor(endpoint, this.llm.timeoutMs);
    const estimate = estimateRequestTokens(body);
    const place = limiter.place();
    for (let attempt = 1; ; attempt++) {
      try {
        return await limiter.run(estimate, (ticket) => attemptCompletion(client, body, ticket), place);
      } catch (err) {
        const kind = classifyFailure(err);
        if (kind === 'rejected') {
          const { status, message } = err as APIError;
          throw new SampleRejection(`${req.stage}: endpoint refused the request (HTTP ${status}): ${message}`);
        }
        if (kind === 'fatal' || attempt >= this.retry.maxAttempts) throw err;
        // A 429 needs no wait here: the limiter holds the endpoint until its Retry-After.
        if (kind === 'transient') await sleep(backoffMs(this.retry, attempt));
      }
    }
  }

  private record(stage: Stage, reply: CachedReply, cached: boolean): CallRecord {
    const batch = reply.batch ?? false;
    const cost = costOf({ ...reply, batch }, this.prices);
    return {
      stage,
      model: reply.model,
      promptTokens: reply.promptTokens,
      completionTokens: reply.completionTokens,
      cached,
      simulated: reply.simulated,
      costUsd: cached ? 0 : cost,
      savedUsd: cached ? cost : 0,
      batch,
    };
  }

  /** Endpoint + model + full request + template version; the image enters by its hash, not its bytes. */
  private cacheKey(baseURL: string, params: ChatCompletionCreateParamsNonStreaming, req: ModelRequest): string {
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

/** Tells the limiter how the attempt went: the response headers carry the provider's x-ratelimit-* budgets. */
async function attemptCompletion(client: OpenAI, body: ChatCompletionCreateParamsNonStreaming, ticket: Ticket): Promise<ChatCompletion> {
  try {
    const { data, response } = await client.chat.completions.create(body).withResponse();
    ticket.succeeded(response.headers, data.usage?.total_tokens);
    return data;
  } catch (err) {
    if (classifyFailure(err) === 'rate-limited') ticket.rateLimited((err as APIError).headers);
    throw err;
  }
}

function toCachedReply(completion: ChatCompletion, requestedModel: string, batch: boolean): CachedReply {
  const choice = completion.choices[0];
  return {
    content: choice?.message.content ?? '',
    finishReason: choice?.finish_reason ?? 'unknown',
    model: completion.model || requestedModel,
    promptTokens: completion.usage?.prompt_tokens ?? 0,
    completionTokens: completion.usage?.completion_tokens ?? 0,
    simulated: completion.system_fingerprint === SIMULATOR_FINGERPRINT,
    batch,
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
