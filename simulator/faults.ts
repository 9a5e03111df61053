/**
 * The simulator's behaviour knobs: transport faults, provider rate limits, the Batch API, endpoint
 * misconfiguration, other servers' dialects, and reply quality (so verification has something to
 * catch). Every field can be set at start-up (`faults` option or its SIM_* environment variable,
 * server.ts) and changed at run time (POST /admin/faults); each is described where it is defined.
 */
import { z } from 'zod';
import { SIM_DIALECTS } from './dialects.js';
import { DEFAULT_TUNING } from './replies.js';
import { rngFromHex, sha256Hex } from './rng.js';

const probability = z.number().min(0).max(1);
const millis = z.number().int().min(0);
const count = z.number().int().min(0);

/**
 * Field validators without defaults. Kept apart from the defaulted schema because in zod 4
 * `.partial()` still applies inner defaults, which would make every patch reset the
 * fields it does not mention.
 */
const faultFields = {
  /** Each reply's latency, ± up to latencyJitterMs (SIM_LATENCY_MS, SIM_LATENCY_JITTER_MS). */
  latencyMs: millis,
  latencyJitterMs: millis,
  /** Share of attempts answered 429 with Retry-After retryAfterSeconds (SIM_RATE_429, SIM_RETRY_AFTER_SECONDS). */
  rate429: probability,
  retryAfterSeconds: count,
  /** Share of attempts answered 500 (SIM_RATE_500). */
  rate500: probability,
  /** Share of attempts left unanswered for hangMs (SIM_RATE_HANG, SIM_HANG_MS). */
  rateHang: probability,
  hangMs: millis,
  /** Share of replies that are not JSON (SIM_RATE_MALFORMED). */
  rateMalformed: probability,
  /** Share of replies cut short (SIM_RATE_TRUNCATED). */
  rateTruncated: probability,
  /** Requests in flight above this are answered 429 (SIM_MAX_CONCURRENT). */
  maxConcurrent: count,
  /**
   * Probability that an answer follows each constraint the simulator recognises; otherwise it breaks it on
   * purpose (SIM_COMPLIANCE_RATE).
   */
  complianceRate: probability,
  /**
   * Probability that a judge passes a constraint it cannot check itself; checkable ones are judged
   * truthfully (SIM_JUDGE_LENIENCY).
   */
  judgeLeniency: probability,
  /**
   * In a chat, a persistent ("From now on, ...") instruction given k turns back is followed with
   * probability complianceRate · persistence^k (SIM_PERSISTENCE).
   */
  persistence: probability,
  /**
   * Provider limits per minute, enforced with 429s and reported in OpenAI's x-ratelimit-* headers,
   * rateLimits.ts (SIM_RATE_LIMIT_REQUESTS, SIM_RATE_LIMIT_TOKENS).
   */
  rateLimitRequests: count,
  rateLimitTokens: count,
  /** The time a batch takes to finish, batches.ts (SIM_BATCH_COMPLETION_MS). */
  batchCompletionMs: millis,
  /** Share of a batch's lines answered with a 500 in the error file (SIM_BATCH_FAILURE_RATE). */
  batchFailureRate: probability,
  /** Share of lines still unfinished when the window closes; any makes the batch `expired` (SIM_BATCH_EXPIRE_RATE). */
  batchExpireRate: probability,
  /** The input file limits, OpenAI's by default (SIM_BATCH_MAX_REQUESTS, SIM_BATCH_MAX_BYTES). */
  batchMaxRequests: count.min(1),
  batchMaxBytes: count.min(1),
  /** Share of attempts refused with a 400, misconfiguration.ts (SIM_RATE_400). */
  rate400: probability,
  /** The only key accepted, 401 otherwise (SIM_REQUIRED_API_KEY). */
  requiredApiKey: z.string(),
  /** The only models served, 404 otherwise (SIM_KNOWN_MODELS, comma-separated). */
  knownModels: z.array(z.string().min(1)),
  /** Models that refuse image input with a 400 (SIM_TEXT_ONLY_MODELS). */
  textOnlyModels: z.array(z.string().min(1)),
  /** Every request answered 429 insufficient_quota (SIM_INSUFFICIENT_QUOTA=1). */
  insufficientQuota: z.boolean(),
  /** Every chat error message ends with the request's key, as careless proxies do. */
  echoKeyInErrors: z.boolean(),
  /**
   * The dialect every model speaks, dialects.ts (SIM_DIALECT); modelDialects: a model's own
   * (SIM_MODEL_DIALECTS, `model=dialect` comma-separated).
   */
  dialect: z.enum(SIM_DIALECTS),
  modelDialects: z.record(z.string().min(1), z.enum(SIM_DIALECTS)),
  /**
   * Every reply's content padded with spaces to at least this many bytes, as a runaway model or proxy
   * sends (SIM_REPLY_PAD_BYTES).
   */
  replyPadBytes: count,
  /**
   * The reply body sent a few bytes at a time, this long apart, as a stalled upstream or a slow proxy does
   * (SIM_TRICKLE_MS).
   */
  trickleMs: millis,
} as const;

const FaultConfigSchema = z
  .object({
    latencyMs: faultFields.latencyMs.default(0),
    latencyJitterMs: faultFields.latencyJitterMs.default(0),
    rate429: faultFields.rate429.default(0),
    retryAfterSeconds: faultFields.retryAfterSeconds.default(1),
    rate500: faultFields.rate500.default(0),
    rateHang: faultFields.rateHang.default(0),
    hangMs: faultFields.hangMs.default(30_000),
    rateMalformed: faultFields.rateMalformed.default(0),
    rateTruncated: faultFields.rateTruncated.default(0),
    /** 0 = unlimited. */
    maxConcurrent: faultFields.maxConcurrent.default(0),
    complianceRate: faultFields.complianceRate.default(DEFAULT_TUNING.complianceRate),
    judgeLeniency: faultFields.judgeLeniency.default(DEFAULT_TUNING.judgeLeniency),
    persistence: faultFields.persistence.default(DEFAULT_TUNING.persistence),
    /** Per minute; 0 = unlimited and no x-ratelimit headers. */
    rateLimitRequests: faultFields.rateLimitRequests.default(0),
    rateLimitTokens: faultFields.rateLimitTokens.default(0),
    batchCompletionMs: faultFields.batchCompletionMs.default(1000),
    batchFailureRate: faultFields.batchFailureRate.default(0),
    batchExpireRate: faultFields.batchExpireRate.default(0),
    batchMaxRequests: faultFields.batchMaxRequests.default(50_000),
    batchMaxBytes: faultFields.batchMaxBytes.default(200 * 1024 * 1024),
    rate400: faultFields.rate400.default(0),
    /** '' = any key. */
    requiredApiKey: faultFields.requiredApiKey.default(''),
    /** [] = any model. */
    knownModels: faultFields.knownModels.default([]),
    textOnlyModels: faultFields.textOnlyModels.default([]),
    insufficientQuota: faultFields.insufficientQuota.default(false),
    echoKeyInErrors: faultFields.echoKeyInErrors.default(false),
    dialect: faultFields.dialect.default('plain'),
    /** Per model, over `dialect`. */
    modelDialects: faultFields.modelDialects.default({}),
    /** 0 = replies as written. */
    replyPadBytes: faultFields.replyPadBytes.default(0),
    /** 0 = the reply is sent at once. */
    trickleMs: faultFields.trickleMs.default(0),
  })
  .strict();

export type FaultConfig = z.infer<typeof FaultConfigSchema>;

/** A partial update: only the given fields change. Unknown keys are rejected to catch typos. */
export const FaultPatchSchema = z.object(faultFields).partial().strict();

export const DEFAULT_FAULTS: Readonly<FaultConfig> = Object.freeze(FaultConfigSchema.parse({}));

/** Validates `patch` and applies it on top of `base`; throws a ZodError when invalid. */
export function mergeFaults(base: FaultConfig, patch: unknown): FaultConfig {
  return { ...base, ...FaultPatchSchema.parse(patch) };
}

export type FaultKind = 'none' | 'rate429' | 'rate500' | 'hang' | 'malformed' | 'truncated' | 'rate400';

interface FaultDecision {
  kind: FaultKind;
  /** Delay before the outcome is sent (latency plus jitter); a hang waits `hangMs` on top. */
  latencyMs: number;
}

/**
 * Decides the outcome of one attempt. Seeded by (seed, request key, attempt number), so a
 * run is reproducible while a client retry of the same request (next attempt) gets a fresh
 * draw and can succeed whenever the rates are below 1.
 *
 * The rates partition one uniform draw, so each is the share of all attempts with that
 * fault as long as they sum to at most 1 (beyond that, the later kinds are starved).
 */
export function decideFault(config: FaultConfig, seed: number, requestKey: string, attempt: number): FaultDecision {
  const rng = rngFromHex(sha256Hex(`fault\u0000${seed}\u0000${requestKey}\u0000${attempt}`));
  const draw = rng.next();
  const jitter = rng.int(0, config.latencyJitterMs);
  return { kind: pickKind(config, draw), latencyMs: config.latencyMs + jitter };
}

function pickKind(config: FaultConfig, draw: number): FaultKind {
  const shares: Array<[Exclude<FaultKind, 'none'>, number]> = [
    ['rate429', config.rate429],
    ['rate500', config.rate500],
    ['hang', config.rateHang],
    ['malformed', config.rateMalformed],
    ['truncated', config.rateTruncated],
    ['rate400', config.rate400],
  ];
  let rest = draw;
  for (const [kind, rate] of shares) {
    if (rest < rate) return kind;
    rest -= rate;
  }
  return 'none';
}

/**
 * Batch line faults, drawn apart from decideFault so that switching batch knobs never changes the
 * replies or faults of synchronous calls. A failure is drawn per attempt (a resubmitted line can
 * succeed); an expiry per batch and line (the window closed on this batch, not on the request).
 */
export function decideBatchFailure(config: FaultConfig, seed: number, requestKey: string, attempt: number): boolean {
  return rngFromHex(sha256Hex(`batch-failure\u0000${seed}\u0000${requestKey}\u0000${attempt}`)).chance(config.batchFailureRate);
}

export function decideBatchExpiry(config: FaultConfig, seed: number, batchId: string, customId: string): boolean {
  return rngFromHex(sha256Hex(`batch-expiry\u0000${seed}\u0000${batchId}\u0000${customId}`)).chance(config.batchExpireRate);
}
