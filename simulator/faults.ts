/**
 * The simulator's behaviour knobs. Every field can be set at start-up (`faults` option or a
 * SIM_* environment variable, see server.ts) and changed at run time (POST /admin/faults).
 *
 * Transport faults: latencyMs / latencyJitterMs (SIM_LATENCY_MS, SIM_LATENCY_JITTER_MS),
 * rate429 + retryAfterSeconds (SIM_RATE_429, SIM_RETRY_AFTER_SECONDS), rate500 (SIM_RATE_500),
 * rateHang + hangMs (SIM_RATE_HANG, SIM_HANG_MS), rateMalformed (SIM_RATE_MALFORMED),
 * rateTruncated (SIM_RATE_TRUNCATED), maxConcurrent (SIM_MAX_CONCURRENT).
 *
 * Provider rate limits (0 = none): rateLimitRequests / rateLimitTokens (SIM_RATE_LIMIT_REQUESTS,
 * SIM_RATE_LIMIT_TOKENS) per minute, enforced with 429s and reported in OpenAI's x-ratelimit-*
 * headers (see rateLimits.ts).
 *
 * Batch API (see batches.ts): batchCompletionMs (SIM_BATCH_COMPLETION_MS), the time a batch takes
 * to finish; batchFailureRate (SIM_BATCH_FAILURE_RATE), the share of lines answered with a 500 in
 * the error file; batchExpireRate (SIM_BATCH_EXPIRE_RATE), the share of lines still unfinished when
 * the window closes (any makes the batch `expired`); batchMaxRequests / batchMaxBytes
 * (SIM_BATCH_MAX_REQUESTS, SIM_BATCH_MAX_BYTES), the input file limits (OpenAI's by default).
 *
 * Endpoint misconfiguration (see misconfiguration.ts; off by default): rate400 (SIM_RATE_400), the
 * share of attempts refused with a 400; requiredApiKey (SIM_REQUIRED_API_KEY), the only key
 * accepted (401 otherwise); knownModels (SIM_KNOWN_MODELS, comma-separated), the only models served
 * (404 otherwise); textOnlyModels (SIM_TEXT_ONLY_MODELS), models that refuse image input (400);
 * insufficientQuota (SIM_INSUFFICIENT_QUOTA=1), every request answered 429 insufficient_quota;
 * echoKeyInErrors, every chat error message ends with the request's key, as careless proxies do.
 *
 * Other servers (see dialects.ts): dialect (SIM_DIALECT), the dialect every model speaks (`plain`,
 * `openai-reasoning`, `inline-think`, `reasoning-content`, `no-json-schema`, `html-proxy`);
 * modelDialects (SIM_MODEL_DIALECTS, `model=dialect` comma-separated), a model's own. Replies that
 * are not what they should be: replyPadBytes (SIM_REPLY_PAD_BYTES), every reply's content padded
 * with spaces to at least this many bytes, as a runaway model or proxy sends; trickleMs
 * (SIM_TRICKLE_MS), the reply body sent a few bytes at a time, this long apart, as a stalled
 * upstream or a slow proxy does.
 *
 * Reply quality, so verification has something to catch:
 * - complianceRate (SIM_COMPLIANCE_RATE, default 0.9): probability that an answer follows each
 *   constraint the simulator recognises; otherwise it breaks that constraint on purpose.
 * - judgeLeniency (SIM_JUDGE_LENIENCY, default 0.9): probability that a judge passes a
 *   constraint it cannot check itself (checkable ones are always judged truthfully).
 * - persistence (SIM_PERSISTENCE, default 0.97): in a chat, a persistent ("From now on, ...")
 *   instruction given k turns back is followed with probability complianceRate · persistence^k.
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
  latencyMs: millis,
  latencyJitterMs: millis,
  rate429: probability,
  retryAfterSeconds: count,
  rate500: probability,
  rateHang: probability,
  hangMs: millis,
  rateMalformed: probability,
  rateTruncated: probability,
  maxConcurrent: count,
  complianceRate: probability,
  judgeLeniency: probability,
  persistence: probability,
  rateLimitRequests: count,
  rateLimitTokens: count,
  batchCompletionMs: millis,
  batchFailureRate: probability,
  batchExpireRate: probability,
  batchMaxRequests: count.min(1),
  batchMaxBytes: count.min(1),
  rate400: probability,
  requiredApiKey: z.string(),
  knownModels: z.array(z.string().min(1)),
  textOnlyModels: z.array(z.string().min(1)),
  insufficientQuota: z.boolean(),
  echoKeyInErrors: z.boolean(),
  dialect: z.enum(SIM_DIALECTS),
  modelDialects: z.record(z.string().min(1), z.enum(SIM_DIALECTS)),
  replyPadBytes: count,
  trickleMs: millis,
} as const;

export const FaultConfigSchema = z
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

export interface FaultDecision {
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
