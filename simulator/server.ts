/**
 * OpenAI-compatible chat completions simulator (node:http only) with deterministic replies,
 * injectable latency and faults, provider rate limits, the Batch API (batches.ts), and admin
 * endpoints for stats and fault control.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { BatchService, type LineResult } from './batches.js';
import { DEFAULT_FAULTS, FaultPatchSchema, decideBatchFailure, decideFault, mergeFaults, type FaultConfig, type FaultKind } from './faults.js';
import { dialectFor, PORTAL_PAGE, refuseInDialect, ServerError, SIM_DIALECTS, thinkingOf, thoughtsFor, type SimDialect } from './dialects.js';
import { HttpError, readJson, send, sendJson } from './http.js';
import { gpuFleetFromEnv, type GpuFleet, type RequestWork } from './gpuProfile.js';
import { emptyVisionStats, VisionCache, type VisionStats } from './visionCache.js';
import { ConfigError } from '../config/configError.js';
import { envNumber } from '../config/envNumber.js';
import { REQUEST_KIND_HEADER } from '../domain/promptKinds.js';
import { parseBatchCustomId } from '../llm/batch.js';
import { checkChat, checkKey, echoingKey } from './misconfiguration.js';
import { ProviderRateLimits } from './rateLimits.js';
import { PROMPT_CACHE_PRESETS, PromptCache, type PromptCacheSettings } from './promptCache.js';
import {
  ChatRequestSchema,
  REQUEST_KINDS,
  completionBody,
  completionTokens,
  detectKind,
  generateReply,
  imagePartTokens,
  malformReply,
  promptTokens,
  requestKey,
  tokenLimit,
  truncateReply,
  type ChatRequest,
  type Reply,
  type RequestKind,
} from './replies.js';

export interface SimulatorOptions {
  /** 0 (default) picks an ephemeral port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0. Changes every reply and every fault decision. */
  seed?: number;
  faults?: Partial<FaultConfig>;
  /** Serve as N GPUs of a published profile: latency from each reply's length, a cap of requests in flight (simulator/gpuProfile.ts). */
  gpus?: GpuFleet;
  /**
   * A provider-side prompt cache (promptCache.ts): replies then report
   * `usage.prompt_tokens_details.cached_tokens`. Off by default: with it, the usage of a request
   * depends on the requests before it, and identical requests are no longer answered byte for byte alike.
   */
  promptCache?: PromptCacheSettings;
  /**
   * Prompt tokens every image part counts for, whatever its size and model. Unset: what the request's
   * model family counts for the image's size and detail (llm/imageTokens.ts: OpenAI's tiles or
   * patches, Qwen2.5-VL's merged patches).
   */
  imageTokens?: number;
}

/**
 * Counters cover chat completions only (POST /v1/chat/completions and batch lines, which count like
 * them and again under `batch`), so polling the admin, file and batch routes does not skew them.
 */
interface SimulatorStats {
  requests: number;
  /** Replies sent with status 200 (including malformed and truncated ones). */
  completed: number;
  byStatus: Record<string, number>;
  inFlight: number;
  maxInFlight: number;
  promptTokens: number;
  completionTokens: number;
  /** Of promptTokens, those reported as cached (with a prompt cache). */
  cachedPromptTokens: number;
  /** This instance's vision-encoder cache (visionCache.ts): each replica keeps its own. */
  vision: VisionStats;
  /** Completed (200) replies per request kind. `byStage`: the name GET /admin/stats serves (bench/harness.ts reads it). */
  byStage: Record<RequestKind, number>;
  batch: BatchLineStats;
  /** Serving as GPUs: their slots, and the slot time the replies so far took (ms): slot time / slots is the shortest wall time that serves them. */
  gpus?: { slots: number; busyMs: number };
}

/** Batch lines: those that ran (also counted above) and those that never did. */
interface BatchLineStats {
  requests: number;
  completed: number;
  /** Ran and answered with an error (in the error file). */
  failed: number;
  /** Still unfinished when the window closed. */
  expired: number;
  /** Not run because the batch was cancelled first. */
  cancelled: number;
  promptTokens: number;
  completionTokens: number;
}

export interface SimulatorHandle {
  /** Base URL for OpenAI clients, ending in /v1. */
  url: string;
  port: number;
  stats(): SimulatorStats;
  /** Merges a partial fault config (validated; throws on invalid input) and returns the result. */
  setFaults(patch: Partial<FaultConfig>): FaultConfig;
  /** Zeroes the stats and the per-request attempt counters; the fault config stays. */
  resetStats(): void;
  close(): Promise<void>;
}

const SIMULATED_MODELS = ['mmif-sim-vlm', 'mmif-sim-vlm-mini', 'mmif-sim-llm'] as const;

export async function startSimulator(options: SimulatorOptions = {}): Promise<SimulatorHandle> {
  const host = options.host ?? '127.0.0.1';
  const promptCache = options.promptCache && new PromptCache(options.promptCache, options.imageTokens);
  const simulator = new Simulator(options.seed ?? 0, mergeFaults(DEFAULT_FAULTS, options.faults ?? {}), options.imageTokens, options.gpus, promptCache);
  const server = createServer((req, res) => simulator.handle(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/v1`,
    port,
    stats: () => simulator.snapshot(),
    setFaults: (patch) => simulator.setFaults(patch),
    resetStats: () => simulator.resetStats(),
    close: () =>
      new Promise<void>((resolve, reject) => {
        simulator.shutdown();
        server.close((error) => (error ? reject(error) : resolve()));
        // Keep-alive and hanging connections would otherwise hold close() open.
        server.closeAllConnections();
      }),
  };
}

// ---------------------------------------------------------------------------------------
// Environment

/** Env variable → fault field; every fault field can be set from the environment. */
const FAULT_ENV = {
  SIM_LATENCY_MS: 'latencyMs',
  SIM_LATENCY_JITTER_MS: 'latencyJitterMs',
  SIM_RATE_429: 'rate429',
  SIM_RETRY_AFTER_SECONDS: 'retryAfterSeconds',
  SIM_RATE_500: 'rate500',
  SIM_RATE_HANG: 'rateHang',
  SIM_HANG_MS: 'hangMs',
  SIM_RATE_MALFORMED: 'rateMalformed',
  SIM_RATE_TRUNCATED: 'rateTruncated',
  SIM_MAX_CONCURRENT: 'maxConcurrent',
  SIM_COMPLIANCE_RATE: 'complianceRate',
  SIM_JUDGE_LENIENCY: 'judgeLeniency',
  SIM_PERSISTENCE: 'persistence',
  SIM_RATE_LIMIT_REQUESTS: 'rateLimitRequests',
  SIM_RATE_LIMIT_TOKENS: 'rateLimitTokens',
  SIM_BATCH_COMPLETION_MS: 'batchCompletionMs',
  SIM_BATCH_FAILURE_RATE: 'batchFailureRate',
  SIM_BATCH_EXPIRE_RATE: 'batchExpireRate',
  SIM_BATCH_MAX_REQUESTS: 'batchMaxRequests',
  SIM_BATCH_MAX_BYTES: 'batchMaxBytes',
  SIM_RATE_400: 'rate400',
  SIM_REPLY_PAD_BYTES: 'replyPadBytes',
  SIM_TRICKLE_MS: 'trickleMs',
} as const satisfies Record<string, keyof FaultConfig>;

/** Reads SIM_PORT, SIM_HOST, SIM_SEED and the SIM_* fault variables; unset or empty means default. */
export function simulatorOptionsFromEnv(env: Record<string, string | undefined> = process.env): SimulatorOptions {
  const options: SimulatorOptions = {};
  const port = envNumber('SIM_PORT', env, z.number().int().min(0).max(65535));
  if (port !== undefined) options.port = port;
  const host = env.SIM_HOST?.trim();
  if (host) options.host = host;
  const seed = envNumber('SIM_SEED', env, z.number().int().safe());
  if (seed !== undefined) options.seed = seed;
  const faults: Partial<FaultConfig> = {};
  for (const [name, field] of Object.entries(FAULT_ENV)) {
    const value = envNumber(name, env, FaultPatchSchema.shape[field]);
    if (value !== undefined) faults[field] = value;
  }
  const requiredApiKey = env.SIM_REQUIRED_API_KEY?.trim();
  if (requiredApiKey) faults.requiredApiKey = requiredApiKey;
  for (const [name, field] of [
    ['SIM_KNOWN_MODELS', 'knownModels'],
    ['SIM_TEXT_ONLY_MODELS', 'textOnlyModels'],
  ] as const) {
    const list = env[name]
      ?.split(',')
      .map((m) => m.trim())
      .filter(Boolean);
    if (list?.length) faults[field] = list;
  }
  if (env.SIM_INSUFFICIENT_QUOTA?.trim()) faults.insufficientQuota = ['1', 'true'].includes(env.SIM_INSUFFICIENT_QUOTA.trim());
  const dialect = env.SIM_DIALECT?.trim();
  if (dialect) faults.dialect = readDialect('SIM_DIALECT', dialect);
  const modelDialects = env.SIM_MODEL_DIALECTS?.split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (modelDialects?.length) {
    faults.modelDialects = Object.fromEntries(
      modelDialects.map((entry) => {
        const at = entry.lastIndexOf('=');
        if (at <= 0) throw new ConfigError(`Invalid environment variable SIM_MODEL_DIALECTS: "${entry}" is not model=dialect`);
        return [entry.slice(0, at).trim(), readDialect('SIM_MODEL_DIALECTS', entry.slice(at + 1).trim())];
      }),
    );
  }
  const imageTokens = envNumber('SIM_IMAGE_TOKENS', env, z.number().int().min(0));
  if (imageTokens !== undefined) options.imageTokens = imageTokens;
  const cache = env.SIM_PROMPT_CACHE?.trim();
  if (cache) {
    if (!(cache in PROMPT_CACHE_PRESETS))
      throw new ConfigError(`Invalid environment variable SIM_PROMPT_CACHE=${JSON.stringify(cache)}: use ${Object.keys(PROMPT_CACHE_PRESETS).join(' or ')}`);
    options.promptCache = PROMPT_CACHE_PRESETS[cache as keyof typeof PROMPT_CACHE_PRESETS];
  }
  if (Object.keys(faults).length > 0) options.faults = faults;
  const gpus = gpuFleetFromEnv(env);
  if (gpus) options.gpus = gpus;
  return options;
}

function readDialect(name: string, value: string): SimDialect {
  const dialect = SIM_DIALECTS.find((d) => d === value);
  if (!dialect) throw new ConfigError(`Invalid environment variable ${name}: unknown dialect "${value}" (one of ${SIM_DIALECTS.join(', ')})`);
  return dialect;
}

// ---------------------------------------------------------------------------------------
// Request handling

function emptyStats(): SimulatorStats {
  return {
    requests: 0,
    completed: 0,
    byStatus: {},
    inFlight: 0,
    maxInFlight: 0,
    promptTokens: 0,
    completionTokens: 0,
    cachedPromptTokens: 0,
    vision: emptyVisionStats(),
    byStage: Object.fromEntries(REQUEST_KINDS.map((kind) => [kind, 0])) as Record<RequestKind, number>,
    batch: { requests: 0, completed: 0, failed: 0, expired: 0, cancelled: 0, promptTokens: 0, completionTokens: 0 },
  };
}

class Simulator {
  private stats = emptyStats();
  /** Attempts seen per request key, so a retry of a faulted request gets a fresh fault draw. */
  private readonly attempts = new Map<string, number>();
  /** Aborted when their client leaves, or all at once on shutdown. */
  private readonly pending = new Set<AbortController>();
  private readonly rateLimits = new ProviderRateLimits();
  private readonly batches = new BatchService(this);
  private readonly vision = new VisionCache();

  constructor(
    readonly seed: number,
    private faultConfig: FaultConfig,
    private readonly imageTokens: number | undefined,
    private readonly gpus?: GpuFleet,
    private readonly promptCache?: PromptCache,
  ) {}

  faults(): FaultConfig {
    return this.faultConfig;
  }

  handle(req: IncomingMessage, res: ServerResponse): void {
    this.route(req, res).catch((error: unknown) => this.fail(res, error));
  }

  snapshot(): SimulatorStats {
    const stats = structuredClone(this.stats);
    return this.gpus ? { ...stats, gpus: { slots: this.gpus.maxConcurrent, busyMs: this.gpus.busyMs } } : stats;
  }

  setFaults(patch: unknown): FaultConfig {
    this.faultConfig = mergeFaults(this.faultConfig, patch);
    return { ...this.faultConfig };
  }

  resetStats(): void {
    const { inFlight } = this.stats;
    this.stats = { ...emptyStats(), inFlight, maxInFlight: inFlight };
    this.attempts.clear();
  }

  /** Cancels pending latency and hang timers so close() is not held up by them. */
  shutdown(): void {
    for (const controller of this.pending) controller.abort();
    this.batches.shutdown();
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://simulator').pathname;
    // Chat requests check it in chat(), after being counted.
    if (path.startsWith('/v1/') && path !== '/v1/chat/completions') checkKey(this.faultConfig, req);
    const deployment = AZURE_CHAT.exec(path)?.[1];
    if (deployment !== undefined && req.method === 'POST') {
      return this.chat(req, res, azureDeployment(req, deployment)).catch((err: unknown) => {
        throw echoingKey(this.faultConfig, req, err);
      });
    }
    switch (`${req.method} ${path}`) {
      case 'POST /v1/chat/completions':
        return this.chat(req, res).catch((err: unknown) => {
          throw echoingKey(this.faultConfig, req, err);
        });
      case 'GET /v1/models':
        return sendJson(res, 200, {
          object: 'list',
          data: (this.faultConfig.knownModels.length > 0 ? this.faultConfig.knownModels : SIMULATED_MODELS).map((id) => ({
            id,
            object: 'model',
            created: 0,
            owned_by: 'mmif-simulator',
          })),
        });
      case 'GET /admin/stats':
        return sendJson(res, 200, this.snapshot());
      case 'POST /admin/faults':
        return sendJson(res, 200, this.patchFaults(await readJson(req)));
      case 'POST /admin/reset':
        this.resetStats();
        return sendJson(res, 200, this.snapshot());
      default:
        if (await this.batches.route(req.method ?? '', path, req, res)) return;
        throw new HttpError(404, `Unknown route: ${req.method} ${path}`, 'invalid_request_error', 'not_found');
    }
  }

  private patchFaults(patch: unknown): FaultConfig {
    const parsed = FaultPatchSchema.safeParse(patch);
    if (!parsed.success) throw new HttpError(400, `Invalid fault config: ${z.prettifyError(parsed.error)}`);
    return this.setFaults(parsed.data);
  }

  /** `deployment`: the Azure deployment the request came for (its model when the body names none). */
  private async chat(req: IncomingMessage, res: ServerResponse, deployment?: string): Promise<void> {
    const arrived = performance.timeOrigin + performance.now();
    this.stats.requests++;
    // Counted on 'finish' so every status is tallied in one place, and replies a client
    // abandoned mid-way are not.
    res.once('finish', () => this.countStatus(res.statusCode));
    const body = await readJson(req);
    const request = parseChatRequest(deployment !== undefined && typeof body === 'object' && body !== null ? { model: deployment, ...body } : body);
    const asks = detectKind(request, req.headers[REQUEST_KIND_HEADER]);
    const dialect = dialectFor(this.faultConfig, request.model);
    if (dialect === 'html-proxy') return send(res, 200, PORTAL_PAGE, 'text/html; charset=utf-8');
    checkKey(this.faultConfig, req);
    checkChat(this.faultConfig, request);
    refuseInDialect(dialect, request);
    if (this.faultConfig.maxConcurrent > 0 && this.stats.inFlight >= this.faultConfig.maxConcurrent) {
      throw this.rateLimited(`Simulated concurrency limit of ${this.faultConfig.maxConcurrent} requests reached.`);
    }
    if (this.gpus && this.stats.inFlight >= this.gpus.maxConcurrent) {
      throw this.rateLimited(`Simulated GPUs full: ${this.gpus.maxConcurrent} requests in flight.`);
    }
    const budget = this.rateLimits.admit(this.faultConfig, promptTokens(request, this.imageTokens) + (tokenLimit(request) ?? 0));
    if (!budget.ok) throw this.rateLimited('Simulated rate limit (requests or tokens per minute) reached.', budget.headers);
    this.stats.inFlight++;
    this.stats.maxInFlight = Math.max(this.stats.maxInFlight, this.stats.inFlight);
    const counted = performance.timeOrigin + performance.now();
    const controller = abortWhenAbandoned(res);
    this.pending.add(controller);
    try {
      await this.complete(request, asks, dialect, res, controller.signal, budget.headers, `${arrived.toFixed(1)},${counted.toFixed(1)}`);
    } finally {
      this.pending.delete(controller);
      this.stats.inFlight--;
    }
  }

  private async complete(
    request: ChatRequest,
    asks: RequestKind,
    dialect: SimDialect,
    res: ServerResponse,
    signal: AbortSignal,
    headers: Record<string, string>,
    /** When the request arrived and was counted in flight (ms): with the reply's time, x-simulator-times (bench/shareTrace.ts). */
    times: string,
  ): Promise<void> {
    const { key, attempt } = this.nextAttempt(request);
    const decision = decideFault(this.faultConfig, this.seed, key, attempt);
    // Serving as GPUs, a reply's time follows its length: it is made first and sent after its decode time.
    const early = this.gpus && ['none', 'malformed', 'truncated'].includes(decision.kind) ? this.reply(request, asks, key, decision.kind, dialect) : undefined;
    await pause(early ? this.gpus!.latencyMs(early.work) : decision.latencyMs, signal);
    switch (decision.kind) {
      case 'rate429':
        throw this.rateLimited('Simulated rate limit reached, please retry later.', headers);
      case 'rate500':
        throw new HttpError(500, 'Simulated internal server error.', 'server_error', 'internal_error');
      case 'rate400':
        throw new HttpError(400, 'Simulated invalid request: the endpoint refuses this request.', 'invalid_request_error', 'invalid_request');
      case 'hang':
        await pause(this.faultConfig.hangMs, signal);
        throw new HttpError(504, 'Simulated upstream timeout.', 'server_error', 'timeout');
      default: {
        const body = JSON.stringify(early ? this.counted(early, false) : this.completion(request, asks, key, decision.kind, false, dialect));
        const replyHeaders = { ...headers, 'x-simulator-times': `${times},${(performance.timeOrigin + performance.now()).toFixed(1)}` };
        if (this.faultConfig.trickleMs > 0) return trickle(res, body, replyHeaders, this.faultConfig.trickleMs, signal);
        send(res, 200, body, 'application/json', replyHeaders);
      }
    }
  }

  /**
   * One batch line, answered as the synchronous route would answer it: same validation, same
   * attempt counter, same reply and content faults. Transport faults (latency, 429, 500, hang)
   * belong to HTTP and do not apply; batchFailureRate stands in for them.
   */
  executeBatchLine(body: unknown, customId: string): LineResult {
    this.stats.requests++;
    this.stats.batch.requests++;
    try {
      const request = parseChatRequest(body);
      const { key, attempt } = this.nextAttempt(request);
      if (decideBatchFailure(this.faultConfig, this.seed, key, attempt)) {
        throw new HttpError(500, 'Simulated internal server error.', 'server_error', 'internal_error');
      }
      const kind = decideFault(this.faultConfig, this.seed, key, attempt).kind;
      const completion = this.completion(
        request,
        detectKind(request, parseBatchCustomId(customId)?.kind),
        key,
        kind === 'malformed' || kind === 'truncated' ? kind : 'none',
        true,
        dialectFor(this.faultConfig, request.model),
      );
      this.countStatus(200);
      return { statusCode: 200, body: completion, usage: completion.usage };
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      this.countStatus(error.status);
      this.stats.batch.failed++;
      return { statusCode: error.status, body: error.body() };
    }
  }

  countUnrun(kind: 'expired' | 'cancelled', lines: number): void {
    this.stats.batch[kind] += lines;
  }

  private nextAttempt(request: ChatRequest): { key: string; attempt: number } {
    const key = requestKey(request);
    const attempt = (this.attempts.get(key) ?? 0) + 1;
    this.attempts.set(key, attempt);
    return { key, attempt };
  }

  private completion(request: ChatRequest, asks: RequestKind, key: string, kind: FaultKind, batch: boolean, dialect: SimDialect) {
    return this.counted(this.reply(request, asks, key, kind, dialect), batch);
  }

  /**
   * The chat.completion for a request in its dialect (dialects.ts). A thinking model's thoughts
   * come first and count against the token limit, so a small limit leaves no room for the answer
   * (an empty, or for inline thinking an unterminated, reply cut with finish_reason length).
   */
  private reply(request: ChatRequest, asks: RequestKind, key: string, kind: FaultKind, dialect: SimDialect) {
    const thinking = thinkingOf(dialect);
    const thoughts = thinking === 'none' ? '' : thoughtsFor(key);
    const thoughtTokens = completionTokens(thoughts);
    const limit = tokenLimit(request);
    const cutWhileThinking = thoughtTokens > 0 && limit !== undefined && limit <= thoughtTokens;
    // The answer gets what the thinking leaves of the limit; the request key (so the reply) stays the request's.
    const answerRequest = thoughtTokens > 0 && limit !== undefined ? { ...request, max_tokens: Math.max(1, limit - thoughtTokens), max_completion_tokens: null } : request;
    let reply = applyContentFault(kind, generateReply(answerRequest, this.seed, this.faultConfig, key, asks));
    if (cutWhileThinking) reply = { ...reply, content: '', finishReason: 'length' };
    const shown = cutWhileThinking ? thoughts.slice(0, limit * 4) : thoughts;
    if (this.faultConfig.replyPadBytes > 0) reply = { ...reply, content: reply.content.padEnd(this.faultConfig.replyPadBytes) };
    if (thinking === 'inline') reply = { ...reply, content: cutWhileThinking ? `<think>\n${shown}` : `<think>\n${shown}\n</think>\n\n${reply.content}` };
    const body = completionBody(request, reply, this.imageTokens);
    let cachedTokens = 0;
    if (this.promptCache) {
      cachedTokens = this.promptCache.lookup(request, body.usage.prompt_tokens);
      Object.assign(body.usage, { prompt_tokens_details: { cached_tokens: cachedTokens } });
      this.stats.cachedPromptTokens += cachedTokens;
    }
    const images = request.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((part) => part.type === 'image_url');
    // Every image part is looked up (and counted), none skipped once one needs encoding.
    const encoded = images.map((part) => this.vision.encode(part, this.stats.vision)).includes(true);
    const message: Record<string, unknown> = body.choices[0]!.message;
    const usage: Record<string, unknown> & typeof body.usage = body.usage;
    if (thinking === 'apart') message.reasoning_content = shown;
    if (thinking === 'apart' || thinking === 'hidden') {
      const reasoning = completionTokens(shown);
      usage.completion_tokens += reasoning;
      usage.total_tokens += reasoning;
      if (thinking === 'hidden') usage.completion_tokens_details = { reasoning_tokens: reasoning };
    }
    const work: RequestWork = {
      promptTokens: body.usage.prompt_tokens,
      cachedTokens,
      imageTokens: images.reduce((sum, part) => sum + imagePartTokens(request.model, part, this.imageTokens), 0),
      encoded,
      outputTokens: body.usage.completion_tokens,
    };
    return { kind: reply.kind, body, work };
  }

  /** Counts a reply as completed, when it is sent. */
  private counted({ kind, body }: ReturnType<Simulator['reply']>, batch: boolean) {
    for (const stats of batch ? [this.stats, this.stats.batch] : [this.stats]) {
      stats.completed++;
      stats.promptTokens += body.usage.prompt_tokens;
      stats.completionTokens += body.usage.completion_tokens;
    }
    this.stats.byStage[kind]++;
    return body;
  }

  private countStatus(status: number): void {
    this.stats.byStatus[String(status)] = (this.stats.byStatus[String(status)] ?? 0) + 1;
  }

  private rateLimited(message: string, headers: Record<string, string> = {}): HttpError {
    return new HttpError(429, message, 'requests', 'rate_limit_exceeded', {
      ...headers,
      'retry-after': String(this.faultConfig.retryAfterSeconds),
    });
  }

  private fail(res: ServerResponse, error: unknown): void {
    if (res.headersSent || res.destroyed) return;
    // Aborted waits: the client left or the server is closing, so nobody reads a reply.
    if (error instanceof Error && error.name === 'AbortError') {
      res.destroy();
      return;
    }
    const httpError = error instanceof HttpError ? error : new HttpError(500, `Simulator bug: ${String(error)}`, 'server_error');
    sendJson(res, httpError.status, httpError.body(), httpError.headers);
  }
}

function applyContentFault(kind: FaultKind, reply: Reply): Reply {
  if (kind === 'malformed') return malformReply(reply);
  if (kind === 'truncated') return truncateReply(reply);
  return reply;
}

/**
 * Azure OpenAI's chat route: POST /openai/deployments/{deployment-id}/chat/completions?api-version=...
 * with the key in an `api-key` header (https://learn.microsoft.com/en-us/azure/ai-foundry/openai/reference#chat-completions).
 * Without api-version Azure answers 404 Resource not found (MicrosoftDocs/azure-docs#114602).
 */
const AZURE_CHAT = /^\/openai\/deployments\/([^/]+)\/chat\/completions$/;

function azureDeployment(req: IncomingMessage, deployment: string): string {
  if (!new URL(req.url ?? '/', 'http://simulator').searchParams.get('api-version')) {
    throw new ServerError(404, 'Resource not found', { error: { code: '404', message: 'Resource not found' } });
  }
  return decodeURIComponent(deployment);
}

function parseChatRequest(body: unknown): ChatRequest {
  if (typeof body === 'object' && body !== null && (body as { stream?: unknown }).stream === true) {
    throw new HttpError(400, 'The simulator does not support stream: true.', 'invalid_request_error', 'unsupported_parameter');
  }
  const parsed = ChatRequestSchema.safeParse(body);
  if (!parsed.success) {
    throw new HttpError(400, `Invalid chat completion request: ${z.prettifyError(parsed.error)}`);
  }
  return parsed.data;
}

/** Aborts when the client disconnects before the response has been fully sent. */
function abortWhenAbandoned(res: ServerResponse): AbortController {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller;
}

/** Sends `body` a few bytes at a time, `everyMs` apart, as a stalled upstream does (the client's timeout must catch it). */
async function trickle(res: ServerResponse, body: string, headers: Record<string, string>, everyMs: number, signal: AbortSignal): Promise<void> {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  const bytes = Buffer.from(body);
  for (let at = 0; at < bytes.length; at += TRICKLE_BYTES) {
    if (at > 0) await pause(everyMs, signal);
    res.write(bytes.subarray(at, at + TRICKLE_BYTES));
  }
  res.end();
}

const TRICKLE_BYTES = 16;

async function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (ms > 0) await sleep(ms, undefined, { signal });
}
