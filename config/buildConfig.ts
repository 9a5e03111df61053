/**
 * The build configuration: the one JSON document a user writes (or `temporal workflow start
 * --input-file` sends). Validated with zod in the workflow itself, so a bad config fails the build
 * at once with a message naming the field. It holds no secrets: API keys are named by env var.
 * Pure and deterministic: imported by workflow code.
 */
import { z } from 'zod';
import { imageSchema } from './imageConfig.js';
import { sourceSchema, sourceTargetsSchema } from './sourceConfig.js';
import { MAX_CHAT_INSTRUCTIONS, MAX_CHAT_TURNS } from '../domain/multiturn/limits.js';
import { ConfigError } from './configError.js';
import { BATCHABLE_STAGES, endpointFor } from './endpointRouting.js';

export { imageSchema, type ImageConfig } from './imageConfig.js';
export { sourceSchema, type SourceConfig } from './sourceConfig.js';

/** Model-calling stages; `richness` is the VLM tag count that can select images at planning (sources[].richness). */
export const STAGES = ['instruction', 'constraints', 'compatibility', 'verifier', 'answer', 'rejected', 'judge', 'richness'] as const;
export type Stage = (typeof STAGES)[number];

export const DPO_STRATEGIES = ['drop33', 'drop66', 'drop100', 'no_image'] as const;
export type DpoStrategy = (typeof DPO_STRATEGIES)[number];

export const DPO_VALIDATION = ['strict', 'paper'] as const;
export type DpoValidation = (typeof DPO_VALIDATION)[number];

/** How the user turn of a training record states the task (the generation prompt is not affected). */
export const TRAINING_PROMPT_TEMPLATES = ['inline', 'numbered', 'mixed'] as const;
export type TrainingPromptTemplate = (typeof TRAINING_PROMPT_TEMPLATES)[number];

export const slug = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'use letters, digits, ".", "_" or "-"');

export const endpointSchema = z
  .object({
    model: z.string().min(1),
    /** OpenAI-compatible base URL, e.g. http://localhost:8000/v1. Unset: the worker's OPENAI_BASE_URL. */
    baseUrl: z.string().url().optional(),
    /** Name of the env var holding the API key (never the key itself). */
    apiKeyEnv: z.string().regex(/^[A-Z_][A-Z0-9_]*$/).default('OPENAI_API_KEY'),
    /** Requests in flight to this endpoint, all workers of the task queue together (leased by demand; AIMD adapts below it on 429s). */
    concurrency: z.number().int().min(1).max(1024).default(16),
    /** Client-side pacing; learned from x-ratelimit-* headers when the provider sends them. */
    requestsPerMinute: z.number().positive().optional(),
    tokensPerMinute: z.number().positive().optional(),
    /**
     * Send this stage's first call per sample through the provider's Batch API (/v1/files +
     * /v1/batches; half price at OpenAI), waiting durably; for instruction, constraints, answer, rejected.
     */
    batch: z.boolean().default(false),
    /**
     * Run this stage's activities on their own task queue (one per endpoint), whose workers cap
     * activities/s across all of them (MMIF_TASK_QUEUE_ACTIVITIES_PER_SECOND); default: the build's queue.
     */
    taskQueue: z.string().min(1).optional(),
  })
  .strict();
export type EndpointConfig = z.infer<typeof endpointSchema>;

export const s3Schema = z
  .object({
    endpoint: z.string().url().optional(),
    region: z.string().optional(),
    forcePathStyle: z.boolean().optional(),
  })
  .strict();

/** What a build makes: single-turn MM-IFEngine samples, or MMMT-IF chats (seed 002) with turn-level pairs. */
export const BUILD_MODES = ['single', 'multiturn'] as const;
export type BuildMode = (typeof BUILD_MODES)[number];

/** `chat` settings of a multiturn build (pipeline/multiturn/chatStage.ts). */
export const chatSchema = z
  .object({
    /** Question turns per chat (seed 002's chats run to 20). */
    turns: z.number().int().min(1).max(MAX_CHAT_TURNS).default(10),
    /** Global instructions per chat at most (seed 002: 6); before each question one is added with probability 1 − given/maxInstructions. */
    maxInstructions: z.number().int().min(1).max(MAX_CHAT_INSTRUCTIONS).default(MAX_CHAT_INSTRUCTIONS),
    /** A turn's answer is kept when its PIF reaches this, else regenerated (1: every instruction in force followed). */
    pifThreshold: z.number().gt(0).max(1).default(1),
  })
  .strict();
export type ChatConfig = z.output<typeof chatSchema>;

/** Retry policy of every pipeline activity (builds and evals); after the last attempt the shard (or eval) fails. */
export const retrySchema = z
  .object({
    maximumAttempts: z.number().int().min(1).max(100).default(8),
    initialIntervalSeconds: z.number().positive().default(2),
    maximumIntervalSeconds: z.number().positive().default(120),
    /** A worker silent this long (killed, partitioned) loses its activities to another worker. */
    heartbeatTimeoutSeconds: z.number().positive().default(30),
  })
  .strict()
  .default({ maximumAttempts: 8, initialIntervalSeconds: 2, maximumIntervalSeconds: 120, heartbeatTimeoutSeconds: 30 });

/** Model-call settings shared by builds and evals (llm/modelCaller.ts). */
export const llmSchema = z
  .object({
    temperature: z.number().min(0).max(2).default(0.7),
    /** Judges and verifier selection run at this temperature (the reference used 0). */
    judgeTemperature: z.number().min(0).max(2).default(0),
    maxTokens: z.number().int().positive().default(1024),
    timeoutMs: z.number().int().positive().default(120_000),
    /** Model calls in flight per activity (per slice). */
    concurrency: z.number().int().min(1).max(256).default(8),
    /** Ask for response_format json_schema (OpenAI, vLLM, SGLang, Ollama >= 0.5 support it). */
    structuredOutput: z.boolean().default(true),
    imageDetail: z.enum(['auto', 'low', 'high']).default('auto'),
    /** USD per million tokens by model, over the built-in (dated, approximate) table. */
    prices: z
      .record(
        z.string().min(1),
        z
          .object({
            inputPerMTok: z.number().min(0),
            outputPerMTok: z.number().min(0),
            batchDiscount: z.number().min(0).max(1).default(0.5),
          })
          .strict(),
      )
      .default({}),
    /** Retries of one model call (429s wait for Retry-After; 5xx/timeouts back off with jitter). */
    retry: z
      .object({
        maxAttempts: z.number().int().min(1).max(20).default(6),
        baseDelayMs: z.number().int().min(0).default(1000),
        maxDelayMs: z.number().int().min(0).default(30_000),
      })
      .strict()
      .default({ maxAttempts: 6, baseDelayMs: 1000, maxDelayMs: 30_000 }),
    /**
     * Tries per call when the reply is unusable: empty, unparseable after the repair round trip,
     * cut by max_tokens or refused by a content filter. Each try sends a new OpenAI `seed` (and is
     * its own cache entry); after the last the sample is rejected with the cause.
     */
    replyTries: z.number().int().min(1).max(10).default(3),
    /** A reply cut by `maxTokens` is tried once more with this larger limit (unset: no larger try). */
    maxTokensCeiling: z.number().int().positive().optional(),
    /**
     * A shard fails (instead of committing a quietly empty result) when samples rejected by
     * model-call errors (endpoint refusals, unusable replies after every try) exceed `maxFraction`
     * of its samples, or when `maxConsecutive` samples in a row of one slice fail that way.
     */
    errorBudget: z
      .object({
        maxFraction: z.number().min(0).max(1).default(0.2),
        maxConsecutive: z.number().int().min(1).default(8),
      })
      .strict()
      .default({ maxFraction: 0.2, maxConsecutive: 8 }),
    /**
     * Before planning, send one tiny request (with an image where the stage sends images) per
     * distinct endpoint and model, so a bad key, unknown model or text-only model fails in seconds.
     */
    preflight: z.boolean().default(true),
    /**
     * Re-running a build (same buildId and config) re-opens its committed shards that hold
     * samples rejected by model-call errors, regenerates just those samples and commits the shard
     * again as a new revision. Off: committed shards are left as they are.
     */
    rerunModelCallRejects: z.boolean().default(true),
  })
  .strict()
  .default({
    temperature: 0.7,
    judgeTemperature: 0,
    maxTokens: 1024,
    timeoutMs: 120_000,
    concurrency: 8,
    structuredOutput: true,
    imageDetail: 'auto',
    prices: {},
    retry: { maxAttempts: 6, baseDelayMs: 1000, maxDelayMs: 30_000 },
    replyTries: 3,
    errorBudget: { maxFraction: 0.2, maxConsecutive: 8 },
    preflight: true,
    rerunModelCallRejects: true,
  });

export const buildConfigSchema = z
  .object({
    buildId: slug,
    seed: z.number().int().nonnegative().default(0),
    /** `multiturn`: one chat of `chat.turns` questions per image, with global instructions (seed 002). */
    mode: z.enum(BUILD_MODES).default('single'),
    /** Chat settings; only with mode `multiturn` (defaults apply when absent). */
    chat: chatSchema.optional(),
    /** Output root: a local directory or s3://bucket/prefix. The build writes under <output>/<buildId>/. */
    output: z.string().min(1),
    /**
     * Where the model-call cache lives (`<cacheUri>/_cache/llm/`); default: `output`. Scheduled runs
     * write to dated prefixes but share the cache of their base output, so unchanged samples cost nothing.
     */
    cacheUri: z.string().min(1).optional(),
    /** Endpoint options for every s3:// URI in this config (credentials come from the AWS env). */
    s3: s3Schema.default({}),
    sources: z.array(sourceSchema).min(1),
    /** Samples to select from the sources (deterministically, by seeded hash order). */
    maxSamples: z.number().int().positive(),
    /**
     * Accepted records wanted. The build tops up in rounds: further ranks of the same seeded order, in
     * new shards, until each source meets its share or runs out; surplus records are trimmed by rank.
     * maxSamples then caps the samples planned over all rounds.
     */
    targets: sourceTargetsSchema
      .extend({
        /** Accepted share of planned samples assumed for the first round (later rounds use the measured one). */
        expectedYield: z.number().gt(0).max(1).default(0.8),
        /** Planning rounds at most (the first included). */
        maxRounds: z.number().int().min(1).max(50).default(8),
      })
      .strict()
      .refine((t) => t.instruct !== undefined || t.dpo !== undefined, 'set instruct, dpo or both')
      .optional(),
    /**
     * A held-out split reserved for evaluation: every accepted sample whose normalized image is drawn
     * (seeded by `seed` and the image's sha256, so a shared image is drawn once) is kept out of the
     * training data and written as the eval split (`MM-IFEval/mmif_holdout.jsonl`); no image is in both.
     */
    holdout: z
      .object({ fraction: z.number().gt(0).lt(1) })
      .strict()
      .optional(),
    shardSize: z.number().int().min(1).max(5000).default(64),
    /** Samples per activity call: bounds history (one event group per slice) and retry cost. */
    sliceSize: z.number().int().min(1).max(500).default(16),
    maxParallelShards: z.number().int().min(1).max(500).default(4),
    /** Shards one workflow run starts before it continues as new (sooner if Temporal suggests it). */
    shardsPerRun: z.number().int().min(1).max(10_000).default(200),
    /** Retry policy of every pipeline activity; after the last attempt the shard is reported failed. */
    retry: retrySchema,
    /**
     * When shards failed, the finished build waits this long for a `retryFailedShards` update before
     * it writes its report and fails; 0 fails at once (re-run it with the same workflow id).
     */
    retryWindowSeconds: z.number().int().min(0).default(0),
    /** Batch API waits: polls back off from a few seconds to `pollSeconds`; failed or expired lines are resubmitted `maxResubmits` times, then made synchronously. */
    batchApi: z
      .object({
        pollSeconds: z.number().positive().default(300),
        maxResubmits: z.number().int().min(0).max(10).default(2),
      })
      .strict()
      .default({ pollSeconds: 300, maxResubmits: 2 }),
    /** Upsert MmifBuildId / MmifSource / MmifStatus search attributes (they must be registered on the server). */
    searchAttributes: z.boolean().default(false),
    image: imageSchema.default(imageSchema.parse({})),
    instruction: z
      .object({
        /** Task-pool examples shown in the Fig. 14 prompt. */
        examples: z.number().int().min(1).max(18).default(6),
      })
      .strict()
      .default({ examples: 6 }),
    constraints: z
      .object({
        /** Constraint types offered to the model in the Fig. 15 prompt. */
        typesOffered: z.number().int().min(3).max(32).default(12),
        min: z.number().int().min(1).default(3),
        max: z.number().int().min(1).default(12),
      })
      .strict()
      .default({ typesOffered: 12, min: 3, max: 12 }),
    verification: z
      .object({
        /** A sample is kept when at least this fraction of its constraints pass (1 = strict). */
        passThreshold: z.number().gt(0).max(1).default(0.8),
        /** Extra answers generated when an answer (or a rejected answer) misses the bar. */
        maxRegenerations: z.number().int().min(0).max(10).default(2),
        /** Ask the verifier model (Fig. 20) for constraints the phrase parser does not recognise. */
        llmVerifierSelection: z.boolean().default(true),
        /**
         * Share of rule-checked constraints (seeded) that the direct judge also scores, in a call of
         * their own: the quality report's judge-vs-rule agreement. The rule verdict still decides.
         */
        judgeAgreementSample: z.number().min(0).max(1).default(0.05),
      })
      .strict()
      .default({ passThreshold: 0.8, maxRegenerations: 2, llmVerifierSelection: true, judgeAgreementSample: 0.05 }),
    dpo: z
      .object({
        /**
         * How rejected answers are made; each sample draws one (seeded). drop33/drop66/drop100 drop
         * ceil(n/3), ceil(2n/3) or all constraints; no_image keeps the constraints and drops the image.
         */
        strategies: z.array(z.enum(DPO_STRATEGIES)).min(1).default(['drop33']),
        /**
         * strict: a pair is kept only if the rejected answer fails a constraint at stake and the
         * chosen answer loses on no constraint both were verified on (pipeline/pairRules.ts);
         * otherwise the rejected answer is regenerated, then the pair discarded. paper: the
         * paper's unvalidated pairs: one rejected answer, kept as generated.
         */
        validate: z.enum(DPO_VALIDATION).default('strict'),
      })
      .strict()
      .default({ strategies: ['drop33'], validate: 'strict' }),
    training: z
      .object({
        /**
         * The prompt written into the records' user turn: `inline` (the instruction followed by the
         * constraints as prose, the form MM-IFEval evaluates with), `numbered` (the `## Task Description /
         * ## Constraints` form answers are generated with) or `mixed` (a seeded choice per sample).
         */
        promptTemplate: z.enum(TRAINING_PROMPT_TEMPLATES).default('inline'),
      })
      .strict()
      .default({ promptTemplate: 'inline' }),
    models: z
      .object({
        default: endpointSchema,
        instruction: endpointSchema.optional(),
        constraints: endpointSchema.optional(),
        compatibility: endpointSchema.optional(),
        verifier: endpointSchema.optional(),
        answer: endpointSchema.optional(),
        rejected: endpointSchema.optional(),
        judge: endpointSchema.optional(),
        richness: endpointSchema.optional(),
      })
      .strict(),
    llm: llmSchema,
  })
  .strict()
  .superRefine((c, ctx) => {
    for (const stage of ['compatibility', 'verifier', 'judge'] as const) {
      if (c.models[stage]?.batch) {
        ctx.addIssue({ code: 'custom', path: ['models', stage, 'batch'], message: 'the Batch API applies to instruction, constraints, answer and rejected' });
      }
    }
    if (c.llm.maxTokensCeiling !== undefined && c.llm.maxTokensCeiling <= c.llm.maxTokens) {
      ctx.addIssue({ code: 'custom', path: ['llm', 'maxTokensCeiling'], message: 'must exceed llm.maxTokens' });
    }
    for (const [i, source] of c.sources.entries()) {
      if (source.targets && !c.targets) {
        ctx.addIssue({ code: 'custom', path: ['sources', i, 'targets'], message: 'source targets need the build-level targets (which turn on topping up)' });
      }
      if (source.quota !== undefined && c.targets) {
        ctx.addIssue({ code: 'custom', path: ['sources', i, 'quota'], message: 'with targets, a source takes targets (accepted records), not quota (planned samples)' });
      }
    }
    const slices = Math.ceil(c.shardSize / c.sliceSize);
    if (slices > MAX_SLICES_PER_SHARD) {
      ctx.addIssue({
        code: 'custom',
        path: ['sliceSize'],
        message: `shardSize ${c.shardSize} / sliceSize ${c.sliceSize} makes ${slices} slices per shard, over ${MAX_SLICES_PER_SHARD}: a shard's workflow history (one activity per slice and stage) would near Temporal's limits; raise sliceSize or lower shardSize`,
      });
    }
    if (c.mode === 'single' && c.chat) {
      ctx.addIssue({ code: 'custom', path: ['chat'], message: 'chat settings apply to mode "multiturn" only; set mode: "multiturn" or remove chat' });
    }
    if (c.mode === 'multiturn') {
      // A chat's turns depend on the answers before them, and its records are chats, not samples.
      for (const stage of BATCHABLE_STAGES) {
        if (c.models[stage]?.batch) ctx.addIssue({ code: 'custom', path: ['models', stage, 'batch'], message: 'the Batch API is not used by multiturn builds' });
      }
      if (c.models.default.batch) ctx.addIssue({ code: 'custom', path: ['models', 'default', 'batch'], message: 'the Batch API is not used by multiturn builds' });
      if (c.targets) ctx.addIssue({ code: 'custom', path: ['targets'], message: 'targets are not supported by multiturn builds yet; use maxSamples' });
    }
    if (c.constraints.min > c.constraints.max) {
      ctx.addIssue({ code: 'custom', path: ['constraints', 'min'], message: 'must not exceed constraints.max' });
    }
  });

/**
 * Slices of one shard at most. A shard's workflow never continues as new: each slice runs 5 stage
 * activities (~6 history events each with their workflow tasks), so 250 slices stay near 7,500
 * events, under Temporal's 10,240-event warning and far below its 51,200-event limit.
 */
export const MAX_SLICES_PER_SHARD = 250;

export type BuildConfigInput = z.input<typeof buildConfigSchema>;
export type BuildConfig = z.output<typeof buildConfigSchema>;

/** Parses a config; throws ConfigError whose message names every bad field by its JSON path. */
export function parseBuildConfig(input: unknown): BuildConfig {
  const result = buildConfigSchema.safeParse(input);
  if (result.success) return result.data;
  const problems = result.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`);
  throw new ConfigError(`invalid build config: ${problems.join('; ')}`);
}

/** The chat settings of a multiturn build, defaults filled in. */
export function chatSettings(config: BuildConfig): ChatConfig {
  return config.chat ?? chatSchema.parse({});
}

/** Settings that change no output byte: excluded from the fingerprint so tuning them never invalidates a build. */
const OPERATIONAL_KEYS = ['maxParallelShards', 'sliceSize', 'shardsPerRun', 'retry', 'retryWindowSeconds', 'searchAttributes', 'cacheUri', 'batchApi'] as const;

/** Endpoint settings that pace calls but change no reply. */
const ENDPOINT_OPERATIONAL_KEYS = ['concurrency', 'requestsPerMinute', 'tokensPerMinute', 'batch', 'taskQueue'] as const;

/** Canonical JSON (sorted keys) of everything that shapes the output. */
export function fingerprintMaterial(config: BuildConfig): string {
  const models = Object.fromEntries(
    Object.entries(config.models).map(([stage, endpoint]) => {
      const copy: Record<string, unknown> = { ...endpoint };
      for (const key of ENDPOINT_OPERATIONAL_KEYS) delete copy[key];
      return [stage, copy];
    }),
  );
  const copy: Record<string, unknown> = {
    ...config,
    models,
    llm: { ...config.llm, concurrency: undefined, prices: undefined, retry: undefined, errorBudget: undefined, preflight: undefined, rerunModelCallRejects: undefined },
  };
  for (const key of OPERATIONAL_KEYS) delete copy[key];
  // Single-turn builds fingerprint as they did before modes existed, so their resumes still match;
  // a multiturn build's chat settings are written out in full (explicit defaults = omitted ones).
  if (config.mode === 'single') delete copy.mode;
  else copy.chat = chatSettings(config);
  return canonicalJson(copy);
}

export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );
}
