/**
 * The build configuration: the one JSON document a user writes (or `temporal workflow start
 * --input-file` sends). Parsed and defaulted by an activity before the workflow reads it
 * (workflows/configInput.ts), so a bad config fails the build at once with a message naming the
 * field. It holds no secrets: API keys are named by env var. Pure and deterministic: runs started
 * before the config was resolved outside the workflow still parse it in workflow code.
 */
import { z } from 'zod';
import { imageSchema } from './imageConfig.js';
import { sourceNames, sourceSchema } from './sourceConfig.js';
import { sourceTargetsSchema } from './sourceFields.js';
import { parseConfig } from './parseConfig.js';
import { BATCHABLE_STAGES, SECONDARY_BATCH_ROLES } from './endpointRouting.js';
import { slug } from './slug.js';
import { decontaminationSetSchema } from './decontaminationConfig.js';
import { s3Schema } from './s3Config.js';
import { modelsSchema } from './modelsConfig.js';
import { llmSchema } from './llmConfig.js';
import { retrySchema } from './retryConfig.js';
import { chatSchema, constraintsSchema, dpoSchema, instructionSchema, qualitySchema, trainingSchema, verificationSchema } from './generationConfig.js';

/** What a build makes: single-turn MM-IFEngine samples, or MMMT-IF chats (seed 002) with turn-level pairs. */
export const BUILD_MODES = ['single', 'multiturn'] as const;
export type BuildMode = (typeof BUILD_MODES)[number];

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
        /** Accepted share of planned samples assumed for the first round (later rounds use the measured one, with 95% confidence). */
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
    /**
     * Evaluation sets no training sample may copy: a sample whose image is one of theirs (same bytes,
     * or the same picture resized, re-encoded, cropped or recoloured: a perceptual-hash candidate
     * confirmed pixel by pixel) or whose question or instruction shares a 13-gram with one of their
     * questions (a shorter question: only together with its image) is rejected as
     * `contaminated: <name> <index>`.
     */
    decontaminate: z.array(decontaminationSetSchema).optional(),
    holdout: z
      .object({ fraction: z.number().gt(0).lt(1) })
      .strict()
      .optional(),
    shardSize: z.number().int().min(1).max(5000).default(64),
    /** Samples per activity call: bounds history (one event group per slice) and retry cost. */
    sliceSize: z.number().int().min(1).max(500).default(16),
    /**
     * Shards run at once. Unset: as many as keep every sample lane of the build's endpoints fed
     * (domain/sampleLanes.ts, at least 4), or 4 with the Batch API, whose shards go stage by stage.
     */
    maxParallelShards: z.number().int().min(1).max(500).optional(),
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
      .prefault({}),
    /** Upsert MmifBuildId / MmifSource / MmifStatus search attributes (they must be registered on the server). */
    searchAttributes: z.boolean().default(false),
    image: imageSchema.prefault({}),
    instruction: instructionSchema,
    constraints: constraintsSchema,
    verification: verificationSchema,
    /** Data-quality checks beyond the paper's (off unless set): `quality.visionDependence`. */
    quality: qualitySchema.optional(),
    dpo: dpoSchema,
    training: trainingSchema,
    models: modelsSchema,
    llm: llmSchema,
  })
  .strict()
  .superRefine((c, ctx) => {
    for (const stage of SECONDARY_BATCH_ROLES) {
      if (c.models[stage]?.batch) {
        ctx.addIssue({ code: 'custom', path: ['models', stage, 'batch'], message: `the Batch API applies to ${BATCHABLE_STAGES.join(', ')}` });
      }
    }
    for (const [role, endpoint] of Object.entries(c.models)) {
      // Azure's Batch API takes global-batch deployments and its own file flow: not the one batch.ts drives.
      if (endpoint?.azure && endpoint.batch)
        ctx.addIssue({ code: 'custom', path: ['models', role, 'batch'], message: 'the Batch API is not used for Azure OpenAI endpoints (models.*.azure)' });
    }
    if (c.llm.maxTokensCeiling !== undefined && c.llm.maxTokensCeiling <= c.llm.maxTokens) {
      ctx.addIssue({ code: 'custom', path: ['llm', 'maxTokensCeiling'], message: 'must exceed llm.maxTokens' });
    }
    const names = sourceNames(c.sources);
    for (const [i, name] of names.entries()) {
      const first = names.indexOf(name);
      if (first < i) ctx.addIssue({ code: 'custom', path: ['sources', i, 'name'], message: `'${name}' already names sources[${first}]: give each source its own name` });
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
    if (c.mode === 'multiturn' && c.training.keepReasoning) {
      ctx.addIssue({ code: 'custom', path: ['training', 'keepReasoning'], message: 'reasoning is kept for single-turn records only: a chat drops it' });
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
const MAX_SLICES_PER_SHARD = 250;

export type BuildConfigInput = z.input<typeof buildConfigSchema>;
export type BuildConfig = z.output<typeof buildConfigSchema>;

/** Parses a config; throws ConfigError whose message names every bad field by its JSON path. */
export function parseBuildConfig(input: unknown): BuildConfig {
  return parseConfig(buildConfigSchema, input, 'build config');
}
