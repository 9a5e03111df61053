/**
 * Every model call of the pipeline goes through here. It
 *  - renders a prompt into OpenAI chat messages (the image as a base64 data URL part),
 *  - answers from the object-store cache when the identical request was made before, so a retried
 *    activity or a re-run build never pays twice,
 *  - sends through the endpoint's worker-wide limiter (limiter.ts) and retries there: 429s wait
 *    for the paused endpoint, 5xx / connection errors / timeouts back off with jitter, and after
 *    the last attempt the error fails the activity so Temporal retries it,
 *  - validates JSON replies with zod, asking once for a repair,
 *  - tries again with a new seed when a reply is unusable (empty, unparseable after the repair, cut
 *    by max_tokens, refused by a content filter) — such replies are never served from the cache as
 *    final (see `withTries`) — and rejects the sample after `llm.replyTries` tries,
 *  - turns request refusals (400, 413, 422) into sample rejections that name the endpoint, and
 *    answers no retry can change (401, 403, 404, no quota) into non-retryable EndpointErrors,
 *  - prices every call (pricing.ts), and
 *  - for the Batch API, prepares request bodies with their cache keys and stores batch replies
 *    where the synchronous path will find them.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { abortSignal } from './abortScope.js';
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
import { SampleRejection, type ModelCallFault } from '../domain/rejection.js';
import { sha256Hex } from '../domain/hashing.js';
import { createJson, getCreatedJson, type ObjectStore } from '../storage/objectStore.js';
import { clientFor, resolveEndpoint, type ResolvedEndpoint } from './endpoint.js';
import { describeFault, EndpointError, faultOf, permanentError } from './endpointError.js';
import { DEFAULT_CONCURRENCY, limiterFor, type EndpointLimits, type Ticket } from './limiter.js';
import { DEFAULT_PRICES, costOf, type PriceTable } from './pricing.js';
import { DEFAULT_RETRY_POLICY, backoffMs, classifyFailure, type RetryPolicy } from './retryPolicy.js';
import { SentLog, type SentMark } from './sentLog.js';
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
  /** The try of a call after unusable replies (1, 2, ...; absent for the first). */
  replyTry?: number;
  /** Why this reply could not be used: the call was tried again. */
  problem?: ReplyProblem;
  /**
   * A cache hit on a reply this very stage of this sample paid for in an attempt that died before
   * recording it (a killed worker): counted as paid here, so cost is never under-reported.
   */
  recovered?: boolean;
  /**
   * Stands for a request an earlier, killed execution of this stage and sample sent and never saw
   * answered (its reply never reached the cache): providers answer and bill such requests, so it is
   * counted, with the tokens of the same request made again now.
   */
  lostInFlight?: boolean;
}

/** Why a reply cannot be used; also the rejection reason code when every try gives one. */
export type ReplyProblem = 'empty-reply' | 'truncated-reply' | 'content-filter' | 'invalid-json';

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
  /**
   * Names the build in the cache entries it writes (any stable string). An unusable reply this
   * build stored is a past try of its own, reused without paying again; one stored by another build
   * (or before the entry carried an owner) counts as a miss once the cached tries are exhausted.
   */
  owner?: string;
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
  /** ModelCallerOptions.owner of the build that paid for it. */
  owner?: string;
  /** The stage execution that paid for it (`forExecution`): tells a lost attempt's calls from cache hits. */
  scope?: string;
  execution?: string;
}

/** One try of a call: its number (0 = the plain request) and the token limit it asks for. */
interface ReplyTry {
  index: number;
  maxTokens: number;
}

/** How one try went: the value, or why its reply cannot be used (and which endpoint gave it). */
type TryOutcome<T> = { ok: true; value: T } | { ok: false; problem: ReplyProblem; detail: string; endpoint: ResolvedEndpoint };

interface TryPass {
  /** Re-request unusable replies stored by another build instead of replaying them. */
  refreshForeign: boolean;
  /** Set when a try replayed an unusable reply another build stored. */
  sawForeign: boolean;
}


/** Seeds of tries after the first: far from the small seeds answer regenerations use. */
const TRY_SEED_STRIDE = 1000;

type ResponseFormat = ChatCompletionCreateParamsNonStreaming['response_format'];

const SIMULATOR_FINGERPRINT = 'mmif-simulator';

export class ModelCaller {
  private readonly limits: (endpoint: EndpointConfig) => EndpointLimits;
  private readonly prices: PriceTable;
  private readonly retry: RetryPolicy;
  private readonly owner: string | undefined;
  private readonly options: ModelCallerOptions;

  constructor(
    private readonly cache: ObjectStore,
    private readonly cachePrefix: string,
    private readonly llm: BuildConfig['llm'],
    options: ModelCallerOptions = {},
    /** Set on the view `forExecution` returns. */
    private readonly execution?: { scope: string; id: string },
    /** Where the executions of a slice note what they send (`forSlice`, or one per `forExecution`). */
    private readonly sentLog?: SentLog,
  ) {
    this.limits = options.limits ?? (() => ({ concurrency: DEFAULT_CONCURRENCY }));
    this.prices = { ...DEFAULT_PRICES, ...options.prices };
    this.retry = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    this.owner = options.owner;
    this.options = options;
  }

  /**
   * A view of this caller for one execution of one stage of one sample (`scope`, e.g.
   * "<sampleId>/answer"). A reply that an earlier execution of the same scope paid for, and that
   * is in the cache although no stage state recorded it, was lost with a killed attempt: its cache
   * hit is counted as paid (`recovered`), so cost is never under-reported.
   *
   * `rerun` (1, 2, ...) marks an execution that tries again a sample the stage rejected for a model
   * call in an earlier execution (a re-run build, a resumed shard). It owns its cache entries apart
   * from the executions before it, so the unusable replies they stored are another owner's and are
   * asked again once replayed (withTries): a fixed endpoint now gets the chance to answer. A retried
   * activity of the same rerun still replays its own tries and pays for nothing twice.
   */
  forExecution(scope: string, rerun = 0): ModelCaller {
    const options = rerun > 0 && this.owner !== undefined ? { ...this.options, owner: `${this.owner}\u0000rerun ${rerun}` } : this.options;
    return new ModelCaller(this.cache, this.cachePrefix, this.llm, options, { scope, id: randomUUID() }, this.sentLog ?? this.sentLogOf(scope));
  }

  /**
   * A view for the executions of one slice of samples (`slice`: the same string every time that
   * slice runs, e.g. its stage and sample range): their `forExecution` views note the requests
   * they send in one log, read once per slice execution, instead of one file per request.
   */
  forSlice(slice: string): ModelCaller {
    return new ModelCaller(this.cache, this.cachePrefix, this.llm, this.options, undefined, this.sentLogOf(slice));
  }

  private sentLogOf(slice: string): SentLog {
    const hash = sha256Hex(`${this.owner ?? ''}\u0000${slice}`);
    return new SentLog(this.cache, `${this.cachePrefix}/sent/${hash.slice(0, 2)}/${hash}.jsonl`);
  }

  /** A prose reply; empty, cut or filtered replies are tried again (see withTries). */
  async text(req: ModelRequest, calls: CallRecord[]): Promise<string> {
    return this.withTries(req, async (t, pass) => {
      const { reply, endpoint } = await this.complete(req, t, this.messages(req), undefined, calls, textProblem, pass);
      const problem = textProblem(reply);
      return problem ? { ok: false, problem, detail: PROBLEM_DETAIL[problem], endpoint } : { ok: true, value: reply.content };
    });
  }

  /** A JSON reply validated by `schema`; one repair round trip per try (see withTries for the tries). */
  async json<T>(req: ModelRequest, schemaName: string, schema: z.ZodType<T>, calls: CallRecord[]): Promise<T> {
    const format = this.responseFormat({ name: schemaName, schema });
    const problemOf = (reply: CachedReply): ReplyProblem | undefined =>
      reply.finishReason === 'content_filter' ? 'content-filter' : parseJsonReply(reply, schema).ok ? undefined : jsonProblem(reply);
    return this.withTries(req, async (t, pass) => {
      const messages = this.messages(req);
      let { reply, endpoint } = await this.complete(req, t, messages, format, calls, problemOf, pass);
      let parsed = parseJsonReply(reply, schema);
      if (parsed.ok) return parsed;
      if (reply.finishReason === 'content_filter') return { ok: false, problem: 'content-filter', detail: PROBLEM_DETAIL['content-filter'], endpoint };
      const repair: ChatCompletionMessageParam[] = [
        ...messages,
        { role: 'assistant', content: reply.content },
        {
          role: 'user',
          content: `Your reply could not be used (${parsed.error}). Reply again with only the complete JSON object in the required format, and nothing else.`,
        },
      ];
      ({ reply, endpoint } = await this.complete(req, t, repair, format, calls, problemOf, pass));
      parsed = parseJsonReply(reply, schema);
      if (parsed.ok) return parsed;
      return { ok: false, problem: problemOf(reply) ?? 'invalid-json', detail: `after repair: ${parsed.error}`, endpoint };
    });
  }

  /**
   * The request text() (no `json`) or json() would send first, without sending it: the Batch API
   * sends `body` instead, and storeReply files the answer under `cacheKey`, so the pipeline then
   * runs on cache hits. Repair round trips and later tries are not prepared: they go through the
   * synchronous path.
   */
  prepare<T>(req: ModelRequest, json?: JsonReply<T>): PreparedRequest {
    return this.build(req, this.firstTry(), this.messages(req), json && this.responseFormat(json)).prepared;
  }

  /**
   * Caches a reply obtained elsewhere (a Batch API result for a prepared body) and returns its call
   * record, priced as a batch call when `batch`. A whole entry already there is kept: the pipeline
   * may have used it. A torn one (a crash while creating it) is replaced: the pipeline reads it as
   * absent and would pay for the request again.
   */
  async storeReply(target: ReplyTarget, completion: ChatCompletion, batch = true): Promise<CallRecord> {
    const reply = { ...toCachedReply(completion, target.model, batch), ...(this.owner ? { owner: this.owner } : {}) };
    const body = JSON.stringify(reply);
    if (!(await this.cache.putIfAbsent(target.cacheKey, body, 'application/json')) && !(await this.isCached(target.cacheKey))) {
      await this.cache.put(target.cacheKey, body, 'application/json');
    }
    return this.record(target.stage, reply, false);
  }

  /** Whether a whole reply is cached under this key (prepared requests carry their key), as the pipeline reads it. */
  async isCached(cacheKey: string): Promise<boolean> {
    return (await getCreatedJson<CachedReply>(this.cache, cacheKey)) !== undefined;
  }

  /** The SDK client of an endpoint, for the Batch API helpers (batch.ts). */
  client(endpoint: EndpointConfig): OpenAI {
    return clientFor(resolveEndpoint(endpoint), this.llm.timeoutMs);
  }

  /**
   * Runs tries 0, 1, ... of one call until one gives a usable reply. Each try after the first sends
   * another seed (a new request and cache entry), and after a reply cut by max_tokens the tries ask
   * for `llm.maxTokensCeiling` tokens. The numbering depends only on what the cache holds, so a
   * retried activity walks the same keys and pays for nothing twice.
   *
   * Unusable replies are never final. The first pass replays the cached tries as they are — the
   * build that stored them took the same path, so a sample it recovered on a later try comes out the
   * same at no cost. When every try failed and some of them replayed another build's unusable
   * replies (a flaky endpoint then; perhaps fixed now), a second pass asks for those again.
   */
  private async withTries<T>(req: ModelRequest, run: (t: ReplyTry, pass: TryPass) => Promise<TryOutcome<T>>): Promise<T> {
    let last: Extract<TryOutcome<T>, { ok: false }> | undefined;
    for (const refreshForeign of [false, true]) {
      const pass: TryPass = { refreshForeign, sawForeign: false };
      let t = this.firstTry();
      for (let index = 0; index < this.llm.replyTries; index++) {
        const outcome = await run({ ...t, index }, pass);
        if (outcome.ok) return outcome.value;
        last = outcome;
        const ceiling = this.llm.maxTokensCeiling;
        if (outcome.problem === 'truncated-reply' && ceiling !== undefined && t.maxTokens < ceiling) t = { ...t, maxTokens: ceiling };
      }
      if (!pass.sawForeign) break;
    }
    const fault: ModelCallFault = { endpoint: last!.endpoint.baseURL, model: last!.endpoint.model, status: 200, excerpt: `${last!.problem}: ${last!.detail}` };
    throw new SampleRejection(`${req.stage}: ${last!.problem}: ${last!.detail} (${this.llm.replyTries} tries)`, { modelCall: fault });
  }

  private firstTry(): ReplyTry {
    return { index: 0, maxTokens: this.llm.maxTokens };
  }

  private messages(req: ModelRequest): ChatCompletionMessageParam[] {
    return req.prompt.messages.map((m) => this.toMessage(m, req));
  }

  private responseFormat<T>(json: JsonReply<T>): ResponseFormat {
    if (!this.llm.structuredOutput) return undefined;
    return { type: 'json_schema', json_schema: { name: json.name, schema: jsonSchemaOf(json.schema) } };
  }

  private toMessage(m: RenderedPrompt['messages'][number], req: ModelRequest): ChatCompletionMessageParam {
    if (!m.withImage || !req.image) return { role: m.role, content: m.text } as ChatCompletionMessageParam;
    const parts: ChatCompletionContentPart[] = [
      {
        type: 'image_url',
        image_url: { url: imageDataUrl(req.image), detail: this.llm.imageDetail },
      },
      { type: 'text', text: m.text },
    ];
    return { role: 'user', content: parts };
  }

  private build(
    req: ModelRequest,
    t: ReplyTry,
    messages: ChatCompletionMessageParam[],
    responseFormat: ResponseFormat,
  ): { endpoint: ResolvedEndpoint; prepared: PreparedRequest } {
    const endpoint = resolveEndpoint(req.endpoint);
    // The first try keeps the request's own seed, so its key is what it always was.
    const seed = t.index === 0 ? req.seed : (req.seed ?? 0) + t.index * TRY_SEED_STRIDE;
    const body: ChatCompletionCreateParamsNonStreaming = {
      model: endpoint.model,
      messages,
      temperature: req.temperature ?? this.llm.temperature,
      max_tokens: t.maxTokens,
      ...(seed !== undefined ? { seed } : {}),
      ...(responseFormat ? { response_format: responseFormat } : {}),
    };
    const cacheKey = `${this.cachePrefix}/${this.cacheKey(endpoint.baseURL, body, req, t)}.json`;
    return { endpoint, prepared: { stage: req.stage, cacheKey, model: endpoint.model, body } };
  }

  /**
   * One request of one try: from the cache when it holds a usable reply, or an unusable one that
   * this build stored (a past try: replayed, not paid again), or one another build stored while the
   * first pass replays; otherwise sent, and stored with this build as its owner.
   */
  private async complete(
    req: ModelRequest,
    t: ReplyTry,
    messages: ChatCompletionMessageParam[],
    responseFormat: ResponseFormat,
    calls: CallRecord[],
    problemOf: (reply: CachedReply) => ReplyProblem | undefined,
    pass: TryPass,
  ): Promise<{ reply: CachedReply; endpoint: ResolvedEndpoint }> {
    const { endpoint, prepared } = this.build(req, t, messages, responseFormat);
    const cached = await getCreatedJson<CachedReply>(this.cache, prepared.cacheKey);
    const foreignProblem = cached !== undefined && (cached.owner === undefined || cached.owner !== this.owner) && problemOf(cached) !== undefined;
    if (foreignProblem) pass.sawForeign = true;
    let reply: CachedReply;
    if (cached && !(foreignProblem && pass.refreshForeign)) {
      reply = cached;
      calls.push(this.tryRecord(req.stage, reply, this.lostByEarlierAttempt(reply) ? 'recovered' : 'cached', t, problemOf(reply)));
    } else {
      const lost = await this.sentByLostExecution(prepared.cacheKey);
      const log = this.execution && this.sentLog;
      // Marked once the request leaves the limiter's queue, not while it waits there.
      const markSent = log ? () => log.sent(prepared.cacheKey, this.sentMark()) : undefined;
      const completion = await this.send(req, endpoint, prepared.body, markSent).catch(async (err: unknown) => {
        // An error status is an answer, and not a billed one: the request is not lost in flight.
        const errorStatus = err instanceof SampleRejection || err instanceof EndpointError || (err instanceof APIError && err.status !== undefined);
        if (log && errorStatus) await log.answered(prepared.cacheKey, this.sentMark());
        throw err;
      });
      reply = {
        ...toCachedReply(completion, endpoint.model, false),
        ...(this.owner ? { owner: this.owner } : {}),
        ...(this.execution ? { scope: this.execution.scope, execution: this.execution.id } : {}),
      };
      // Overwrites an unusable entry of another build: this build's own try replaces it. A torn
      // entry (a crash mid-write) reads as absent: its request is sent again, and counted as lost
      // in flight by the sent log.
      await createJson(this.cache, prepared.cacheKey, reply);
      calls.push(this.tryRecord(req.stage, reply, 'paid', t, problemOf(reply)));
      if (lost) calls.push({ ...this.tryRecord(req.stage, reply, 'paid', t, problemOf(reply)), lostInFlight: true });
    }
    return { reply, endpoint };
  }

  private sentMark(): SentMark {
    return { owner: this.owner, scope: this.execution!.scope, execution: this.execution!.id };
  }

  /**
   * Whether another execution of this very stage and sample sent this request and died before its
   * reply reached the cache: the mark written before every request of a stage execution says so.
   */
  private async sentByLostExecution(cacheKey: string): Promise<boolean> {
    if (!this.execution || !this.sentLog) return false;
    return this.sentLog.sentByAnother(cacheKey, this.sentMark());
  }

  /** Paid by another execution of this very stage and sample of this build, which recorded nothing. */
  private lostByEarlierAttempt(reply: CachedReply): boolean {
    return (
      this.execution !== undefined &&
      reply.owner === this.owner &&
      reply.scope === this.execution.scope &&
      reply.execution !== undefined &&
      reply.execution !== this.execution.id
    );
  }

  /** One call, attempted until it succeeds, is refused, or runs out of attempts (see retryPolicy.ts). */
  private async send(
    req: ModelRequest,
    endpoint: ResolvedEndpoint,
    body: ChatCompletionCreateParamsNonStreaming,
    beforeFirstSend?: () => Promise<void>,
  ): Promise<ChatCompletion> {
    const limits = this.limits(req.endpoint);
    const limiter = limiterFor(endpoint, limits);
    const client = clientFor(endpoint, this.llm.timeoutMs);
    const estimate = estimateRequestTokens(body);
    const place = limiter.place();
    const signal = abortSignal();
    for (let attempt = 1; ; attempt++) {
      try {
        return await limiter.run(
          estimate,
          async (ticket) => {
            signal?.throwIfAborted(); // aborted the moment it was admitted
            if (attempt === 1) await beforeFirstSend?.();
            return attemptCompletion(client, body, ticket, signal);
          },
          place,
          limits,
          signal,
        );
      } catch (err) {
        // Cancelled: neither a fault of the endpoint nor worth another attempt.
        if (signal?.aborted) throw signal.reason;
        const kind = classifyFailure(err);
        if (kind === 'rejected') {
          const fault = faultOf(err as APIError, endpoint);
          throw new SampleRejection(`${req.stage}: endpoint-refused: ${describeFault(fault)}`, { modelCall: fault });
        }
        if (kind === 'permanent') throw permanentError(err as APIError, endpoint, req.endpoint.apiKeyEnv);
        if (kind === 'fatal' || attempt >= this.retry.maxAttempts) throw err;
        // A 429 needs no wait here: the limiter holds the endpoint until its Retry-After.
        if (kind === 'transient') await sleep(backoffMs(this.retry, attempt), undefined, { signal });
      }
    }
  }

  private tryRecord(stage: Stage, reply: CachedReply, how: 'paid' | 'cached' | 'recovered', t: ReplyTry, problem: ReplyProblem | undefined): CallRecord {
    const record = this.record(stage, reply, how === 'cached');
    return {
      ...record,
      ...(t.index > 0 ? { replyTry: t.index } : {}),
      ...(problem ? { problem } : {}),
      ...(how === 'recovered' ? { recovered: true } : {}),
    };
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

  /** Endpoint + model + full request + template version (+ the try); the image enters by its hash, not its bytes. */
  private cacheKey(baseURL: string, params: ChatCompletionCreateParamsNonStreaming, req: ModelRequest, t: ReplyTry): string {
    const imageUrl = req.image ? imageDataUrl(req.image) : undefined;
    const material = canonicalJson({
      baseURL,
      promptVersion: req.prompt.version,
      imageSha256: req.image?.sha256,
      detail: this.llm.imageDetail,
      // Absent for the first try, so first-try keys stay what they were before tries existed.
      ...(t.index > 0 ? { replyTry: t.index } : {}),
      params: { ...params, messages: params.messages.map((m) => withoutImage(m, imageUrl)) },
    });
    const hash = sha256Hex(material);
    return `${hash.slice(0, 2)}/${hash}`;
  }
}

/**
 * The image as a base64 data URL, encoded once per image object: a stage execution loads its
 * sample's image once and sends it in every call (and its cache key), so the encoding is not redone
 * per call. Weakly held: it goes with the image.
 */
const dataUrls = new WeakMap<object, string>();
function imageDataUrl(image: { jpeg: Buffer }): string {
  let url = dataUrls.get(image);
  if (url === undefined) {
    url = `data:image/jpeg;base64,${image.jpeg.toString('base64')}`;
    dataUrls.set(image, url);
  }
  return url;
}

/** A reply schema as JSON Schema, converted once per schema rather than per call (never mutated: bodies and keys only read it). */
const jsonSchemas = new WeakMap<z.ZodType, Record<string, unknown>>();
function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  let converted = jsonSchemas.get(schema);
  if (converted === undefined) {
    converted = z.toJSONSchema(schema) as Record<string, unknown>;
    jsonSchemas.set(schema, converted);
  }
  return converted;
}

/** A message with the image's data URL replaced by '<image>' (the key names the image by its hash). */
function withoutImage(message: ChatCompletionMessageParam, imageUrl: string | undefined): ChatCompletionMessageParam {
  if (imageUrl === undefined || !Array.isArray(message.content)) return message;
  const content = message.content.map((part) =>
    part.type === 'image_url' && part.image_url.url === imageUrl ? { ...part, image_url: { ...part.image_url, url: '<image>' } } : part,
  );
  return { ...message, content } as ChatCompletionMessageParam;
}

const PROBLEM_DETAIL: Record<ReplyProblem, string> = {
  'empty-reply': 'the reply was empty',
  'truncated-reply': 'the reply was cut by the token limit (finish_reason length)',
  'content-filter': 'a content filter refused the reply',
  'invalid-json': 'the reply was not the JSON asked for',
};

/** Why a prose reply cannot be used, if it cannot. */
function textProblem(reply: CachedReply): ReplyProblem | undefined {
  if (reply.finishReason === 'content_filter') return 'content-filter';
  if (reply.finishReason === 'length') return 'truncated-reply';
  if (!reply.content.trim()) return 'empty-reply';
  return undefined;
}

/** Why a JSON reply that did not parse failed: cut, empty, or just not the JSON. */
function jsonProblem(reply: CachedReply): ReplyProblem {
  return textProblem(reply) ?? 'invalid-json';
}

/** Tells the limiter how the attempt went: the response headers carry the provider's x-ratelimit-* budgets. */
async function attemptCompletion(client: OpenAI, body: ChatCompletionCreateParamsNonStreaming, ticket: Ticket, signal?: AbortSignal): Promise<ChatCompletion> {
  try {
    const { data, response } = await client.chat.completions.create(body, signal ? { signal } : undefined).withResponse();
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
