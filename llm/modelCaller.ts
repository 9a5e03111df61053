/**
 * Every model call of the pipeline goes through here: it renders a prompt into messages and a request
 * body (chatMessages.ts, modelRequest.ts), answers from the object-store cache when the identical
 * request was made before (replyCache.ts: nothing is paid twice; lostInFlight.ts counts what killed
 * executions paid for), sends through the endpoint's limiter with retries (sendCompletion.ts),
 * validates JSON replies with zod (one repair), tries again with a new seed when a reply is unusable
 * (replyTries.ts), records and prices every call (callRecord.ts), and for the Batch API prepares
 * bodies with their cache keys and stores batch replies where the synchronous path finds them.
 */
import { randomUUID } from 'node:crypto';
import OpenAI, { APIError } from 'openai';
import type { z } from 'zod';
import type { ChatCompletion, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { BuildConfig } from '../config/buildConfig.js';
import { SampleRejection } from '../domain/rejection.js';
import { sha256Hex } from '../domain/hashing.js';
import { createJson, getCreatedJson, type ObjectStore } from '../storage/objectStore.js';
import { callRecord, tryRecord, type CallRecord } from './callRecord.js';
import { chatMessages } from './chatMessages.js';
import { clientFor, resolveEndpoint } from './endpoint.js';
import type { ResolvedEndpoint, ResolvedReplica } from './resolvedEndpoint.js';
import { EndpointError, faultOf } from './endpointError.js';
import type { EndpointLimits } from './endpointLimits.js';
import { DEFAULT_CONCURRENCY, type EndpointConfig } from '../config/modelsConfig.js';
import { StageExecution } from './lostInFlight.js';
import { prepareRequest, replySchema, type JsonReply, type ModelRequest, type PreparedRequest, type ReplyTarget } from './modelRequest.js';
import type { Dialect, StageAsk } from './dialect.js';
import { DialectMemory } from './dialectMemory.js';
import type { PriceOverrides } from './pricing.js';
import type { BuildBudget } from './buildBudget.js';
import { toCachedReply, type CachedReply } from './replyCache.js';
import {
  firstTry,
  jsonProblem,
  PROBLEM_DETAIL,
  parseJsonReply,
  problemDetail,
  repairQuote,
  runTries,
  textProblem,
  type ReplyProblem,
  type ReplyTry,
  type TryPass,
} from './replyTries.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retryPolicy.js';
import { EndpointGaveUp, RequestRefused, requestLabels, sendCompletion } from './sendCompletion.js';
import { SentLog } from './sentLog.js';
import { flightOf, fly, landed } from './singleFlight.js';
import { abortSignal } from './abortScope.js';
import { repairText } from '../prompts/departures.js';
import { recordBudget, recordPaidCall } from '../telemetry/metrics.js';

export interface ModelCallerOptions {
  /** Limits of one replica of the endpoint a stage calls (a single baseUrl: the endpoint); default: DEFAULT_CONCURRENCY in flight, no rate limits. */
  limits?: (replica: ResolvedReplica, endpoint: EndpointConfig) => EndpointLimits;
  /** Per-model prices (llm.prices), over the price table (pricing.ts). */
  prices?: PriceOverrides;
  retry?: Partial<RetryPolicy>;
  /**
   * Names the build in the cache entries it writes (any stable string). An unusable reply this
   * build stored is a past try of its own, reused without paying again; one stored by another build
   * (or before the entry carried an owner) counts as a miss once the cached tries are exhausted.
   */
  owner?: string;
  /** The build's hard budget (llm.budget): every request sent is admitted by it and its cost counted. */
  budget?: BuildBudget;
  /** Store a thinking model's reasoning with its replies (training.keepReasoning), for textAndReasoning. */
  keepReasoning?: boolean;
  /** The build (or evaluation) id its requests' metrics carry (telemetry/metrics.ts). */
  build?: string;
}

/** One prepared request of one try, and where the record of how it was answered goes. */
interface Asked {
  req: ModelRequest;
  t: ReplyTry;
  prepared: PreparedRequest;
  endpoint: ResolvedEndpoint;
  calls: CallRecord[];
  problemOf: (reply: CachedReply) => ReplyProblem | undefined;
}

/** Refusals answered by a new dialect per request: each renames, drops or steps down a different parameter. */
const MAX_ADAPTATIONS = 4;

export class ModelCaller {
  private readonly limits: NonNullable<ModelCallerOptions['limits']>;
  private readonly prices: PriceOverrides;
  private readonly retry: RetryPolicy;
  private readonly owner: string | undefined;
  private readonly options: ModelCallerOptions;
  private readonly dialects: DialectMemory;

  constructor(
    private readonly cache: ObjectStore,
    private readonly cachePrefix: string,
    private readonly llm: BuildConfig['llm'],
    options: ModelCallerOptions = {},
    /** Set on the view `forExecution` returns. */
    private readonly execution?: StageExecution,
    /** Where the executions of a slice note what they send (`forSlice`, or one per `forExecution`). */
    private readonly sentLog?: SentLog,
  ) {
    this.limits = options.limits ?? (() => ({ concurrency: DEFAULT_CONCURRENCY }));
    this.prices = options.prices ?? {};
    this.retry = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    this.owner = options.owner;
    this.options = options;
    this.dialects = new DialectMemory(cache, cachePrefix);
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
   * asked again once replayed (runTries): a fixed endpoint now gets the chance to answer. A retried
   * activity of the same rerun still replays its own tries and pays for nothing twice.
   */
  forExecution(scope: string, rerun = 0): ModelCaller {
    const options = rerun > 0 && this.owner !== undefined ? { ...this.options, owner: `${this.owner}\u0000rerun ${rerun}` } : this.options;
    const log = this.sentLog ?? this.sentLogOf(scope);
    return new ModelCaller(this.cache, this.cachePrefix, this.llm, options, new StageExecution(options.owner, scope, randomUUID(), log), log);
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

  /** A prose reply; empty, cut or filtered replies are tried again (see runTries). */
  async text(req: ModelRequest, calls: CallRecord[]): Promise<string> {
    return (await this.prose(req, calls, false)).text;
  }

  /**
   * A prose reply and the model's reasoning for it: null when it returned none, or when this caller
   * does not keep reasoning (ModelCallerOptions.keepReasoning). A caller that keeps it does not take
   * a cached reply whose thinking was dropped (stored by a build that did not keep it): that request
   * is made again, paid, and stored with its thinking, so null never stands for thinking not kept.
   */
  async textAndReasoning(req: ModelRequest, calls: CallRecord[]): Promise<{ text: string; reasoning: string | null }> {
    return this.prose(req, calls, this.options.keepReasoning ?? false);
  }

  private prose(req: ModelRequest, calls: CallRecord[], withReasoning: boolean): Promise<{ text: string; reasoning: string | null }> {
    return runTries(req.stage, this.llm, async (t, pass) => {
      const { reply, endpoint } = await this.complete(req, t, this.messages(req), undefined, calls, textProblem, pass, withReasoning);
      const problem = textProblem(reply);
      return problem ? { ok: false, problem, detail: problemDetail(reply, problem), endpoint } : { ok: true, value: { text: reply.content, reasoning: reply.reasoning ?? null } };
    });
  }

  /** A JSON reply validated by `schema`; one repair round trip per try (see runTries for the tries). */
  async json<T>(req: ModelRequest, schemaName: string, schema: z.ZodType<T>, calls: CallRecord[]): Promise<T> {
    const format = replySchema({ name: schemaName, schema }, this.llm);
    const problemOf = (reply: CachedReply): ReplyProblem | undefined => jsonProblem(reply, schema);
    return runTries(req.stage, this.llm, async (t, pass) => {
      const messages = this.messages(req);
      let { reply, endpoint } = await this.complete(req, t, messages, format, calls, problemOf, pass);
      let parsed = parseJsonReply(reply, schema);
      if (parsed.ok) return parsed;
      if (reply.finishReason === 'content_filter') return { ok: false, problem: 'content-filter', detail: PROBLEM_DETAIL['content-filter'], endpoint };
      const repair: ChatCompletionMessageParam[] = [
        ...messages,
        { role: 'assistant', content: repairQuote(reply.content) },
        {
          role: 'user',
          content: repairText(parsed.error),
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
  async prepare<T>(req: ModelRequest, json?: JsonReply<T>): Promise<PreparedRequest> {
    const dialect = await this.dialects.get(resolveEndpoint(req.endpoint));
    return prepareRequest(req, firstTry(this.llm), this.messages(req), replySchema(json, this.llm), dialect, this.llm, this.cachePrefix);
  }

  /**
   * Caches a reply obtained elsewhere (a Batch API result for a prepared body) and returns its call
   * record, priced as a batch call when `batch`. A whole entry already there is kept: the pipeline
   * may have used it. A torn one (a crash while creating it) is replaced: the pipeline reads it as
   * absent and would pay for the request again.
   */
  async storeReply(target: ReplyTarget, completion: ChatCompletion, batch = true): Promise<CallRecord> {
    const reply = { ...toCachedReply(completion, target.model, batch, target.estimate, this.options.keepReasoning), ...(this.owner ? { owner: this.owner } : {}) };
    const body = JSON.stringify(reply);
    let stored = await this.cache.putIfAbsent(target.cacheKey, body, 'application/json');
    if (!stored && !(await this.isCached(target.cacheKey))) {
      await this.cache.put(target.cacheKey, body, 'application/json');
      stored = true;
    }
    const record = callRecord(target.stage, reply, false, this.prices);
    // Counted by the collection that stored it: a retried collection finds it stored and counts nothing again.
    if (stored) await this.options.budget?.billed(record.costUsd);
    return record;
  }

  /** Admits a Batch API submission by the build's budget (BuildBudget.admitBatch): none once it is spent. */
  async admitBatch(): Promise<void> {
    await this.options.budget?.admitBatch();
  }

  /** Whether a whole reply is cached under this key (prepared requests carry their key), as the pipeline reads it. */
  async isCached(cacheKey: string): Promise<boolean> {
    return (await getCreatedJson<CachedReply>(this.cache, cacheKey)) !== undefined;
  }

  /** The SDK client of an endpoint, for the Batch API helpers (batch.ts). */
  client(endpoint: EndpointConfig): OpenAI {
    return clientFor(resolveEndpoint(endpoint), this.llm.timeoutMs);
  }

  private messages(req: ModelRequest): ChatCompletionMessageParam[] {
    return chatMessages(req.prompt, req.image, this.llm.imageDetail);
  }

  /**
   * One request of one try, in the endpoint's dialect: a refusal the dialect can answer (a renamed
   * or dropped parameter, a simpler response format) is learned and the request made again in the
   * new dialect, a few times at most; any other refusal rejects the sample.
   */
  private async complete(
    req: ModelRequest,
    t: ReplyTry,
    messages: ChatCompletionMessageParam[],
    schema: StageAsk['schema'],
    calls: CallRecord[],
    problemOf: (reply: CachedReply) => ReplyProblem | undefined,
    pass: TryPass,
    withReasoning = false,
  ): Promise<{ reply: CachedReply; endpoint: ResolvedEndpoint }> {
    const endpoint = resolveEndpoint(req.endpoint);
    let dialect: Dialect = await this.dialects.get(endpoint);
    for (let adaptations = 0; ; adaptations++) {
      const prepared = prepareRequest(req, t, messages, schema, dialect, this.llm, this.cachePrefix);
      try {
        return { reply: await this.replyTo({ req, t, prepared, endpoint, calls, problemOf }, pass, withReasoning), endpoint };
      } catch (err) {
        if (!(err instanceof RequestRefused) || adaptations >= MAX_ADAPTATIONS) throw err;
        const next = await this.dialects.afterRefusal(endpoint, dialect, err.refusal, prepared.body, faultOf(err.refusal, endpoint).excerpt);
        if (!next) throw err;
        dialect = next;
      }
    }
  }

  /**
   * The reply to one prepared request: from the cache when it holds a usable reply, or an unusable
   * one that this build stored (a past try: replayed, not paid again), or one another build stored
   * while the first pass replays; otherwise sent, and stored with this build as its owner. An
   * identical request already in flight in this process is waited for and its reply then read from
   * the cache by the same rules (singleFlight.ts): a cache hit, paid once.
   */
  private async replyTo(
    asked: Asked,
    pass: TryPass,
    /** The caller keeps the thinking: a cached reply whose thinking was dropped does not answer it. */
    withReasoning: boolean,
  ): Promise<CachedReply> {
    const { req, t, prepared, endpoint, calls, problemOf } = asked;
    const key = prepared.cacheKey;
    for (;;) {
      // Taken before the read too: a flight that lands while the cache is read may have written its
      // reply after the read began; waiting on it (settled: at once) then reads the cache again.
      const earlier = flightOf(this.cache, key);
      const cached = await getCreatedJson<CachedReply>(this.cache, key);
      const foreignProblem = cached !== undefined && (cached.owner === undefined || cached.owner !== this.owner) && problemOf(cached) !== undefined;
      if (foreignProblem) pass.sawForeign = true;
      const thoughtDropped = withReasoning && cached?.thought === true && cached.reasoning === undefined;
      if (cached && !(foreignProblem && pass.refreshForeign) && !thoughtDropped) {
        const how = this.execution?.paidByEarlierAttempt(cached) ? 'recovered' : 'cached';
        calls.push(tryRecord(req.stage, cached, how, t, problemOf(cached), this.prices, endpoint.baseURL));
        return cached;
      }
      const flight = flightOf(this.cache, key) ?? earlier;
      // No await between finding no flight and starting one (fly registers it at once).
      if (!flight) return fly(this.cache, key, () => this.send(asked));
      await landed(flight, abortSignal());
    }
  }

  /** Sends a request no cached reply answers, pays for it and caches the reply with this build as its owner. */
  private async send({ req, t, prepared, endpoint, calls, problemOf }: Asked): Promise<CachedReply> {
    const key = prepared.cacheKey;
    const execution = this.execution;
    const lost = (await execution?.sentByLostExecution(key)) ?? false;
    const budget = this.options.budget;
    let admitted = false;
    const sending = {
      role: req.stage,
      kind: prepared.kind,
      config: req.endpoint,
      endpoint,
      // The timeout bounds how long an admitted attempt holds a leased slot past its lease's term.
      limitsOf: (replica: ResolvedReplica) => ({ ...this.limits(replica, req.endpoint), attemptTimeoutMs: this.llm.timeoutMs, maxWaitMs: this.llm.maxRetryAfterSeconds * 1000 }),
      // All of a sample's requests to one replica, the one its image's hash picks (replicaRoute.ts).
      routeKey: req.image?.sha256 ?? key,
      retry: this.retry,
      timeoutMs: this.llm.timeoutMs,
      maxReplyBytes: this.llm.maxReplyBytes,
      build: this.options.build,
      // Admitted by the budget and marked once the request leaves the limiter's queue, not while it
      // waits there: a request queued when the budget runs out is never sent.
      beforeFirstSend: async () => {
        await budget?.admit();
        admitted = budget !== undefined;
        await execution?.sent(key);
      },
    };
    const { completion, replica } = await sendCompletion(sending, prepared.body, prepared.estimate).catch(async (err: unknown) => {
      if (admitted) budget!.unpaid();
      // An error status is an answer, and not a billed one, and a request that never left this machine
      // (connection refused, host not found) was not billed either: neither is lost in flight.
      const unbilled =
        err instanceof SampleRejection ||
        err instanceof EndpointError ||
        (err instanceof APIError && err.status !== undefined) ||
        (err instanceof EndpointGaveUp && !err.maybeBilled);
      if (execution && unbilled) await execution.answered(key);
      throw err;
    });
    const reply: CachedReply = {
      ...toCachedReply(completion, endpoint.model, false, prepared.estimate, this.options.keepReasoning),
      ...(this.owner ? { owner: this.owner } : {}),
      ...(execution ? execution.stamp() : {}),
    };
    // Cached before anything else can throw (pricing included): a paid reply is never asked for again.
    // Overwrites an unusable entry of another build: this build's own try replaces it. A torn
    // entry (a crash mid-write) reads as absent: its request is sent again, and counted as lost
    // in flight by the sent log.
    const caching = createJson(this.cache, key, reply);
    let record: CallRecord;
    try {
      record = tryRecord(req.stage, reply, 'paid', t, problemOf(reply), this.prices, replica.baseURL);
    } catch (err) {
      await caching;
      throw err;
    }
    // Counted (in this process at once) before the cache write lands: a crash in between sends it again, counted twice rather than never.
    const counted = budget && Promise.all([budget.paid(record.costUsd), ...(lost ? [budget.billed(record.costUsd)] : [])]);
    // Awaited together: a cache write that fails must not leave the count's promise unwatched (an
    // object-store outage fails both, and an unawaited rejection would surface after the activity).
    await Promise.all([caching, counted]);
    // A request a lost execution sent is billed again (as the report counts it).
    for (let n = lost ? 2 : 1; n > 0; n--) recordPaidCall(requestLabels({ ...sending, endpoint: replica }), record, record.costUsd, record.costSource === 'unpriced');
    if (budget) recordBudget(sending.build ?? '', budget.spentUsd(), budget.maxUsd());
    calls.push(record);
    if (lost) calls.push({ ...record, lostInFlight: true });
    return reply;
  }
}
