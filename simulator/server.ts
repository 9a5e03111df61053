/**
 * OpenAI-compatible chat completions simulator (node:http only) with deterministic replies,
 * injectable latency and faults, and admin endpoints for stats and fault control.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import {
  DEFAULT_FAULTS,
  FaultPatchSchema,
  decideFault,
  mergeFaults,
  type FaultConfig,
  type FaultKind,
} from './faults.js';
import {
  ChatRequestSchema,
  STAGES,
  completionBody,
  generateReply,
  malformReply,
  requestKey,
  truncateReply,
  type ChatRequest,
  type Reply,
  type Stage,
} from './replies.js';

export interface SimulatorOptions {
  /** 0 (default) picks an ephemeral port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0. Changes every reply and every fault decision. */
  seed?: number;
  faults?: Partial<FaultConfig>;
}

/** Counters cover POST /v1/chat/completions only, so polling the admin routes does not skew them. */
export interface SimulatorStats {
  requests: number;
  /** Replies sent with status 200 (including malformed and truncated ones). */
  completed: number;
  byStatus: Record<string, number>;
  inFlight: number;
  maxInFlight: number;
  promptTokens: number;
  completionTokens: number;
  /** Completed (200) replies per stage. */
  byStage: Record<Stage, number>;
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

export const SIMULATED_MODELS = ['mmif-sim-vlm', 'mmif-sim-vlm-mini', 'mmif-sim-llm'] as const;

/** Base64 images make bodies large; this only guards against runaway clients. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

export async function startSimulator(options: SimulatorOptions = {}): Promise<SimulatorHandle> {
  const host = options.host ?? '127.0.0.1';
  const simulator = new Simulator(options.seed ?? 0, mergeFaults(DEFAULT_FAULTS, options.faults ?? {}));
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
} as const satisfies Record<string, keyof FaultConfig>;

/** Reads SIM_PORT, SIM_HOST, SIM_SEED and the SIM_* fault variables; unset or empty means default. */
export function simulatorOptionsFromEnv(env: Record<string, string | undefined> = process.env): SimulatorOptions {
  const options: SimulatorOptions = {};
  const port = readEnvNumber(env, 'SIM_PORT', z.number().int().min(0).max(65535));
  if (port !== undefined) options.port = port;
  const host = env.SIM_HOST?.trim();
  if (host) options.host = host;
  const seed = readEnvNumber(env, 'SIM_SEED', z.number().int().safe());
  if (seed !== undefined) options.seed = seed;
  const faults: Partial<FaultConfig> = {};
  for (const [name, field] of Object.entries(FAULT_ENV)) {
    const value = readEnvNumber(env, name, FaultPatchSchema.shape[field]);
    if (value !== undefined) faults[field] = value;
  }
  if (Object.keys(faults).length > 0) options.faults = faults;
  return options;
}

function readEnvNumber(
  env: Record<string, string | undefined>,
  name: string,
  schema: z.ZodType<number | undefined>,
): number | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  const result = schema.safeParse(Number(raw));
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => issue.message).join('; ');
  throw new Error(`Invalid environment variable ${name}=${JSON.stringify(raw)}: ${problems}`);
}

// ---------------------------------------------------------------------------------------
// Request handling

/** Carries an HTTP status and an OpenAI-style error body out of any handler depth. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type: string = 'invalid_request_error',
    readonly code: string | null = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

function emptyStats(): SimulatorStats {
  return {
    requests: 0,
    completed: 0,
    byStatus: {},
    inFlight: 0,
    maxInFlight: 0,
    promptTokens: 0,
    completionTokens: 0,
    byStage: Object.fromEntries(STAGES.map((stage) => [stage, 0])) as Record<Stage, number>,
  };
}

class Simulator {
  private stats = emptyStats();
  /** Attempts seen per request key, so a retry of a faulted request gets a fresh fault draw. */
  private readonly attempts = new Map<string, number>();
  /** Aborted when their client leaves, or all at once on shutdown. */
  private readonly pending = new Set<AbortController>();

  constructor(
    private readonly seed: number,
    private faults: FaultConfig,
  ) {}

  handle(req: IncomingMessage, res: ServerResponse): void {
    this.route(req, res).catch((error: unknown) => this.fail(res, error));
  }

  snapshot(): SimulatorStats {
    return structuredClone(this.stats);
  }

  setFaults(patch: unknown): FaultConfig {
    this.faults = mergeFaults(this.faults, patch);
    return { ...this.faults };
  }

  resetStats(): void {
    const { inFlight } = this.stats;
    this.stats = { ...emptyStats(), inFlight, maxInFlight: inFlight };
    this.attempts.clear();
  }

  /** Cancels pending latency and hang timers so close() is not held up by them. */
  shutdown(): void {
    for (const controller of this.pending) controller.abort();
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://simulator').pathname;
    switch (`${req.method} ${path}`) {
      case 'POST /v1/chat/completions':
        return this.chat(req, res);
      case 'GET /v1/models':
        return sendJson(res, 200, {
          object: 'list',
          data: SIMULATED_MODELS.map((id) => ({ id, object: 'model', created: 0, owned_by: 'mmif-simulator' })),
        });
      case 'GET /admin/stats':
        return sendJson(res, 200, this.snapshot());
      case 'POST /admin/faults':
        return sendJson(res, 200, this.patchFaults(await readJson(req)));
      case 'POST /admin/reset':
        this.resetStats();
        return sendJson(res, 200, this.snapshot());
      default:
        throw new HttpError(404, `Unknown route: ${req.method} ${path}`, 'invalid_request_error', 'not_found');
    }
  }

  private patchFaults(patch: unknown): FaultConfig {
    const parsed = FaultPatchSchema.safeParse(patch);
    if (!parsed.success) throw new HttpError(400, `Invalid fault config: ${z.prettifyError(parsed.error)}`);
    return this.setFaults(parsed.data);
  }

  private async chat(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.stats.requests++;
    // Counted on 'finish' so every status is tallied in one place, and replies a client
    // abandoned mid-way are not.
    res.once('finish', () => {
      const status = String(res.statusCode);
      this.stats.byStatus[status] = (this.stats.byStatus[status] ?? 0) + 1;
    });
    const request = parseChatRequest(await readJson(req));
    if (this.faults.maxConcurrent > 0 && this.stats.inFlight >= this.faults.maxConcurrent) {
      throw this.rateLimited(`Simulated concurrency limit of ${this.faults.maxConcurrent} requests reached.`);
    }
    this.stats.inFlight++;
    this.stats.maxInFlight = Math.max(this.stats.maxInFlight, this.stats.inFlight);
    const controller = abortWhenAbandoned(res);
    this.pending.add(controller);
    try {
      await this.complete(request, res, controller.signal);
    } finally {
      this.pending.delete(controller);
      this.stats.inFlight--;
    }
  }

  private async complete(request: ChatRequest, res: ServerResponse, signal: AbortSignal): Promise<void> {
    const key = requestKey(request);
    const attempt = (this.attempts.get(key) ?? 0) + 1;
    this.attempts.set(key, attempt);
    const decision = decideFault(this.faults, this.seed, key, attempt);
    await pause(decision.latencyMs, signal);
    switch (decision.kind) {
      case 'rate429':
        throw this.rateLimited('Simulated rate limit reached, please retry later.');
      case 'rate500':
        throw new HttpError(500, 'Simulated internal server error.', 'server_error', 'internal_error');
      case 'hang':
        await pause(this.faults.hangMs, signal);
        throw new HttpError(504, 'Simulated upstream timeout.', 'server_error', 'timeout');
      default:
        this.sendCompletion(res, request, applyContentFault(decision.kind, generateReply(request, this.seed, this.faults, key)));
    }
  }

  private sendCompletion(res: ServerResponse, request: ChatRequest, reply: Reply): void {
    const body = completionBody(request, reply);
    this.stats.completed++;
    this.stats.byStage[reply.stage]++;
    this.stats.promptTokens += body.usage.prompt_tokens;
    this.stats.completionTokens += body.usage.completion_tokens;
    sendJson(res, 200, body);
  }

  private rateLimited(message: string): HttpError {
    return new HttpError(429, message, 'requests', 'rate_limit_exceeded', {
      'retry-after': String(this.faults.retryAfterSeconds),
    });
  }

  private fail(res: ServerResponse, error: unknown): void {
    if (res.headersSent || res.destroyed) return;
    // Aborted waits: the client left or the server is closing, so nobody reads a reply.
    if (error instanceof Error && error.name === 'AbortError') {
      res.destroy();
      return;
    }
    const httpError =
      error instanceof HttpError ? error : new HttpError(500, `Simulator bug: ${String(error)}`, 'server_error');
    sendJson(
      res,
      httpError.status,
      { error: { message: httpError.message, type: httpError.type, param: null, code: httpError.code } },
      httpError.headers,
    );
  }
}

function applyContentFault(kind: FaultKind, reply: Reply): Reply {
  if (kind === 'malformed') return malformReply(reply);
  if (kind === 'truncated') return truncateReply(reply);
  return reply;
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

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) {
      // The unread rest of the body makes the connection unusable, so ask the client to drop it.
      throw new HttpError(413, `Request body exceeds ${MAX_BODY_BYTES} bytes.`, 'invalid_request_error', null, {
        connection: 'close',
      });
    }
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpError(400, 'Request body is not valid JSON.');
  }
}

/** Aborts when the client disconnects before the response has been fully sent. */
function abortWhenAbandoned(res: ServerResponse): AbortController {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller;
}

async function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (ms > 0) await sleep(ms, undefined, { signal });
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}
