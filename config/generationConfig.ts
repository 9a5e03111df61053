/**
 * What a build generates and how strictly it checks it: the `instruction`, `constraints`,
 * `verification`, `dpo`, `training` and (multiturn builds) `chat` objects of a build config.
 */
import { z } from 'zod';
import { MAX_CHAT_INSTRUCTIONS, MAX_CHAT_TURNS } from '../domain/multiturn/limits.js';
import { VACUOUS_POLICIES } from '../domain/verdict.js';

const DPO_STRATEGIES = ['drop33', 'drop66', 'drop100', 'no_image'] as const;
export type DpoStrategy = (typeof DPO_STRATEGIES)[number];

const DPO_VALIDATION = ['strict', 'paper'] as const;
export type DpoValidation = (typeof DPO_VALIDATION)[number];

/** How the user turn of a training record states the task (the generation prompt is not affected). */
const TRAINING_PROMPT_TEMPLATES = ['inline', 'numbered', 'mixed'] as const;
export type TrainingPromptTemplate = (typeof TRAINING_PROMPT_TEMPLATES)[number];

export const instructionSchema = z
  .object({
    /** Task-pool examples shown in the Fig. 14 prompt. */
    examples: z.number().int().min(1).max(18).default(6),
  })
  .strict()
  .prefault({});

export const constraintsSchema = z
  .object({
    /** Constraint types offered to the model in the Fig. 15 prompt. */
    typesOffered: z.number().int().min(3).max(32).default(12),
    min: z.number().int().min(1).default(3),
    max: z.number().int().min(1).default(12),
  })
  .strict()
  .prefault({});

export const verificationSchema = z
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
    /**
     * Whether a vacuous rule pass (the answer holds nothing the constraint speaks of: no number for a
     * precision check, no paragraph, an empty answer) counts toward the post-filter and the pair
     * rule: `fail` credits none (fail closed), `pass` keeps the reference functions' semantics.
     */
    vacuous: z.enum(VACUOUS_POLICIES).default('fail'),
  })
  .strict()
  .prefault({});

export const dpoSchema = z
  .object({
    /**
     * How rejected answers are made; each sample draws one (seeded). drop33/drop66/drop100 drop
     * ceil(n/3), ceil(2n/3) or all constraints; no_image keeps the constraints and drops the image.
     */
    strategies: z.array(z.enum(DPO_STRATEGIES)).min(1).default(['drop33']),
    /**
     * strict: a pair is kept only if the rejected answer fails a constraint at stake and the
     * chosen answer loses on no constraint both were verified on (pipeline/stages/rejected/pairRules.ts);
     * otherwise the rejected answer is regenerated, then the pair discarded. paper: the
     * paper's unvalidated pairs: one rejected answer, kept as generated.
     */
    validate: z.enum(DPO_VALIDATION).default('strict'),
  })
  .strict()
  .prefault({});

export const trainingSchema = z
  .object({
    /**
     * The prompt written into the records' user turn: `inline` (the instruction followed by the
     * constraints as prose, the form MM-IFEval evaluates with), `numbered` (the `## Task Description /
     * ## Constraints` form answers are generated with) or `mixed` (a seeded choice per sample).
     */
    promptTemplate: z.enum(TRAINING_PROMPT_TEMPLATES).default('inline'),
    /**
     * A thinking model's reasoning for the answers (llm/reasoning.ts), kept in fields of their own
     * (`answer_reasoning`; `chosen_reasoning` and `rejected_reasoning` in pairs), never in the
     * answer. Off: the reasoning is dropped where it arrives and written nowhere.
     */
    keepReasoning: z.boolean().default(false),
  })
  .strict()
  .prefault({});

/** `chat` settings of a multiturn build (pipeline/stages/chat/chatStage.ts). */
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
type ChatConfig = z.output<typeof chatSchema>;

/** The chat settings of a multiturn build, defaults filled in (`chat` stays optional: single-turn builds refuse it). */
export function chatSettings(config: { chat?: ChatConfig }): ChatConfig {
  return config.chat ?? chatSchema.parse({});
}

/**
 * Data-quality checks beyond the paper's. `visionDependence` (present: on): every accepted sample is
 * also answered without its image and judged (with the image) against its image-grounded constraints
 * and a reference answer, after VC-IFEval (arXiv 2601.03198); a sample answered as well without the
 * image is marked `vision_dependent: false`, and with `filter` rejected.
 */
export const qualitySchema = z
  .object({
    visionDependence: z
      .object({
        /** Reject vision-independent samples (`answer: vision-independent: ...`) instead of only marking them. */
        filter: z.boolean().default(false),
      })
      .strict()
      .optional(),
  })
  .strict();
