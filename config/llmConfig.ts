/** Model-call settings shared by builds and evals (llm/modelCaller.ts): the `llm` object of both configs. */
import { z } from 'zod';

export const llmSchema = z
  .object({
    temperature: z.number().min(0).max(2).default(0.7),
    /** Judges and verifier selection run at this temperature (the reference used 0). */
    judgeTemperature: z.number().min(0).max(2).default(0),
    maxTokens: z.number().int().positive().default(1024),
    /** A model call's whole reply must arrive within this; the error names the endpoint, model and time waited. */
    timeoutMs: z.number().int().positive().default(120_000),
    /** Bytes of a model reply read at most; a larger reply is dropped unread past this and rejected as reply-too-large. */
    maxReplyBytes: z
      .number()
      .int()
      .min(1024)
      .default(4 * 1024 * 1024),
    /**
     * Samples in flight per activity (per slice): an evaluation's, and a build's where a shard runs
     * stage by stage (the Batch API). A build's slices otherwise
     * share the worker's sample lanes, sized from the endpoints' `concurrency` (domain/sampleLanes.ts).
     */
    concurrency: z.number().int().min(1).max(256).default(8),
    /** Ask for response_format json_schema (OpenAI, vLLM, SGLang, Ollama >= 0.5 support it). */
    structuredOutput: z.boolean().default(true),
    imageDetail: z.enum(['auto', 'low', 'high']).default('auto'),
    /**
     * The environment variable holding a tenant salt for the image ids sent to servers that cache
     * images by id (llm/imageIds.ts, vLLM's `uuid`): set on a server shared with other tenants, whose
     * ids it trusts verbatim. Unset: the id is the image's sha256.
     */
    imageIdSaltEnv: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name')
      .optional(),
    /**
     * USD per million tokens by model, over the maintained price table (llm/pricing.ts): for a model
     * the table lacks (a self-hosted one: its price may be 0), or a negotiated price.
     */
    prices: z
      .record(
        z.string().min(1),
        z
          .object({
            inputPerMTok: z.number().min(0),
            outputPerMTok: z.number().min(0),
            /** Prompt tokens served from the provider's prompt cache; unset: inputPerMTok. */
            cachedInputPerMTok: z.number().min(0).optional(),
            batchDiscount: z.number().min(0).max(1).default(0.5),
          })
          .strict(),
      )
      .default({}),
    /**
     * The longest wait an endpoint's 429 may ask for (Retry-After, retry-after-ms, x-ratelimit-reset-*)
     * and be waited for. A longer ask is the endpoint refusing for now: the request fails at once
     * (its slice is retried by Temporal later), the endpoint is paused this long at most, and
     * `mmif status` shows the wait it asked for. Pre-flight reports such an ask instead of passing.
     */
    maxRetryAfterSeconds: z.number().int().positive().max(86_400).default(300),
    /** Retries of one model call (429s wait for Retry-After; 5xx/timeouts back off with jitter). */
    retry: z
      .object({
        maxAttempts: z.number().int().min(1).max(20).default(6),
        baseDelayMs: z.number().int().min(0).max(3_600_000).default(1000),
        maxDelayMs: z.number().int().min(0).max(3_600_000).default(30_000),
      })
      .strict()
      .prefault({}),
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
      .prefault({}),
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
    /**
     * A hard budget for one build, all its workers together (llm/buildBudget.ts): once the build has
     * paid `maxUsd` (priced calls; unpriced ones count 0) or made `maxRequests` paid requests, no
     * request is sent and the build fails with `budget exhausted: $X of $Y spent`. Not part of the
     * fingerprint: raise it and run the build again to continue it, paying nothing twice.
     */
    budget: z
      .object({
        maxUsd: z.number().positive().optional(),
        maxRequests: z.number().int().positive().optional(),
      })
      .strict()
      .optional(),
  })
  .strict()
  .prefault({});
export type LlmConfig = z.output<typeof llmSchema>;
