/**
 * The evaluation configuration: what `mmif eval` starts on Temporal (the `evaluateModel` workflow's
 * input), like a build config for a build. Parsed and defaulted by an activity before the workflow
 * reads it (workflows/configInput.ts), so a bad input fails at once naming the field. No secrets:
 * keys are named by env var.
 */
import { z } from 'zod';
import { MAX_CHAT_INSTRUCTIONS } from '../domain/multiturn/limits.js';
import { canonicalJson, endpointMaterial, llmMaterial } from './fingerprint.js';
import { llmSchema } from './llmConfig.js';
import { endpointSchema } from './modelsConfig.js';
import { retrySchema } from './retryConfig.js';
import { s3Schema } from './s3Config.js';
import { VACUOUS_POLICIES } from '../domain/verdict.js';
import { slug } from './slug.js';
import { parseConfig } from './parseConfig.js';

export const evalConfigSchema = z
  .object({
    /** Names the run: its workflow id is `eval-<evalId>`, its state `<out>/_work/<evalId>/`; a re-run continues it. */
    evalId: slug,
    /** The dataset root (local directory or s3://bucket/prefix/<buildId>): the split and the images are read from it. */
    data: z.string().min(1),
    /** Where the reports go (local directory or s3://...); default `<data>/MM-IFEval/eval`. */
    out: z.string().min(1).optional(),
    /** Where the model-call cache lives (`<cacheUri>/_cache/llm/`); default: `out`. */
    cacheUri: z.string().min(1).optional(),
    s3: s3Schema.default({}),
    /** The model under evaluation (any OpenAI-compatible endpoint); its `taskQueue` routes the eval's activities. */
    model: endpointSchema,
    /** Scores the judged constraints (`direct_gpt`, `cmp_gpt`) with the builds' judges; unset: they are counted, not scored. */
    judge: endpointSchema.optional(),
    /** Responses per sample (single-turn) or per turn (multi-turn, PIF-N-K's N); response i is asked with seed i. */
    responses: z.number().int().min(1).max(16).default(1),
    /** Single-turn user prompt: MM-IFEval's inline `make_prompt_v2` form, or the builds' numbered form. */
    prompt: z.enum(['inline', 'numbered']).default('inline'),
    /**
     * Whether a vacuous rule pass (the response holds nothing the constraint speaks of) counts as
     * followed: `pass` (default) scores as MM-IFEval's functions do, comparable with published figures;
     * `fail` credits none, as builds do by default.
     */
    vacuous: z.enum(VACUOUS_POLICIES).default('pass'),
    /**
     * Multi-turn (seed 002) instead of single-turn: chats (one JSON line `{id, image, questions}` each,
     * images relative to `data`) from `uri`, each given seeded global instructions.
     */
    chats: z
      .object({
        /** Local path or s3:// URI of the chats file. */
        uri: z.string().min(1),
        seed: z.number().int().nonnegative().default(0),
        maxInstructions: z.number().int().min(1).max(MAX_CHAT_INSTRUCTIONS).default(MAX_CHAT_INSTRUCTIONS),
        /** Seed 002's ablation: every instruction given so far appended to the current user turn. */
        appendInstructions: z.boolean().default(false),
      })
      .strict()
      .optional(),
    /** Samples (or chats) per activity call; raised so that an eval has at most 1,000 slices. */
    sliceSize: z.number().int().min(1).max(200).default(4),
    /** Slices in flight at once. */
    maxParallelSlices: z.number().int().min(1).max(100).default(4),
    retry: retrySchema,
    // The hard budget (llm.budget) holds builds only.
    llm: llmSchema.unwrap().omit({ budget: true }).prefault({}),
  })
  .strict();

export type EvalConfigInput = z.input<typeof evalConfigSchema>;
export type EvalConfig = z.output<typeof evalConfigSchema>;

export function parseEvalConfig(input: unknown): EvalConfig {
  return parseConfig(evalConfigSchema, input, 'eval config');
}

/** Where the reports and the run's state are written. */
export function evalOutput(config: Pick<EvalConfig, 'data' | 'out'>): string {
  return config.out ?? `${config.data.replace(/\/+$/, '')}/MM-IFEval/eval`;
}

/** Settings that change no report byte: left out of the fingerprint a re-run is checked against. */
export function evalFingerprintMaterial(config: EvalConfig): string {
  const { sliceSize: _s, maxParallelSlices: _p, retry: _r, cacheUri: _c, ...rest } = config;
  return canonicalJson({
    ...rest,
    model: endpointMaterial(config.model),
    judge: config.judge && endpointMaterial(config.judge),
    llm: llmMaterial(config.llm),
  });
}

/** The workflow id of an evaluation: a re-run with the same evalId is the same workflow. */
export const evalWorkflowId = (evalId: string): string => `eval-${evalId}`;
