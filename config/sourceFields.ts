/**
 * The building blocks of a `sources[]` entry that every source type shares (config/sourceConfig.ts
 * assembles them with each type's own fields from the registry, sources/registry.ts): the fields
 * every source takes, the question policy, dedupe policies, richness selection, per-type defaults.
 * Pure and deterministic: a source type's definition (sources/<type>/definition.ts) imports these,
 * never a reader.
 */
import { z } from 'zod';
import { CONSTRAINT_KEYS } from '../domain/constraints/catalogue.js';
import { imageSchema, type ImageConfig } from './imageConfig.js';

/** How a source's own questions are cleaned and filtered (sources/questions.ts). */
export interface QuestionPolicy {
  /** Length bounds of the cleaned question, in characters. */
  minLength: number;
  maxLength: number;
  /** true: drop questions with answer options; false: strip the options and keep the stem (Geo170K). */
  dropMultipleChoice: boolean;
  /** Drop prompts that carry worked examples (repeated Question:/Answer: pairs, "Example:" blocks). */
  dropFewShot: boolean;
}

export interface SourceDefaults {
  licenseNote: string;
  /** Applied on top of the build's `image` section; a source's own `image` entries win over these. */
  image: Partial<ImageConfig>;
  /** Constraint types offered for this source's images; undefined: all of the catalogue. */
  constraintTypes?: readonly string[];
  /** Only for sources that come with questions. */
  question?: QuestionPolicy;
  /** Which samples count as duplicates of each other (see DEDUPE_POLICIES). */
  dedupe: DedupePolicy;
}

/**
 * When two samples of a source are duplicates, the lower rank is kept. `image`: same normalized image
 * (caption-style sources, where the image is the whole sample); `image+question`: same image and same
 * original question (real releases ask several questions about one chart, page or diagram); `none`.
 */
const DEDUPE_POLICIES = ['image', 'image+question', 'none'] as const;
export type DedupePolicy = (typeof DEDUPE_POLICIES)[number];

/** The question policy most question sources start from (a type's definition may adjust it). */
export const QUESTIONS: QuestionPolicy = { minLength: 8, maxLength: 1000, dropMultipleChoice: true, dropFewShot: true };

/** Measurable, structural constraints: what a chart or a geometry answer can honestly carry. */
export const STRUCTURE_CONSTRAINTS = [
  'paragraph_number_limit',
  'sentence_number_limit',
  'word_count_range_limit',
  'number_and_list_requirements',
  'strict_formatting_requirements',
  'unstrict_formatting_requirements',
  'highlight_requirements',
  'title_requirements',
  'wrap_up_requirement',
  'prefix_and_suffix',
  'mention',
  'not_mention',
  'multiple_mention',
  'logical_relation',
  'language_requirements',
  'target_audience_requirement',
];
/** Screens also suit a point of view, a usage situation or a conditional step ("if the user is signed out..."). */
export const SCREEN_CONSTRAINTS = [...STRUCTURE_CONSTRAINTS, 'perspective_requirement', 'situation_requirement', 'prior_condition', 'tone_requirement', 'case_requirements'];

type ImageFields = typeof imageSchema.shape;
/** imageSchema with every field optional and no default: only what the source overrides. */
const imageOverrideSchema = z
  .object(
    Object.fromEntries(Object.entries(imageSchema.shape).map(([key, field]) => [key, field.unwrap().optional()])) as {
      [K in keyof ImageFields]: z.ZodOptional<ReturnType<ImageFields[K]['unwrap']>>;
    },
  )
  .strict();

const constraintTypesSchema = z
  .array(z.string().refine((key) => CONSTRAINT_KEYS.includes(key), { error: (issue) => `unknown constraint type '${String(issue.input)}'` }))
  .min(1)
  .refine((keys) => new Set(keys).size === keys.length, 'list each constraint type once');

/** A path inside the dataset root, as `files` entries name them. */
export const relativePath = z
  .string()
  .min(1)
  .refine((p) => !p.startsWith('/') && !p.split('/').includes('..') && !p.includes('\\'), 'must be a path relative to the dataset root, without ".."');

export function questionSchema(d: QuestionPolicy) {
  return z
    .object({
      minLength: z.number().int().min(1).default(d.minLength),
      maxLength: z.number().int().positive().default(d.maxLength),
      dropMultipleChoice: z.boolean().default(d.dropMultipleChoice),
      dropFewShot: z.boolean().default(d.dropFewShot),
    })
    .strict()
    .refine((q) => q.minLength <= q.maxLength, { path: ['minLength'], message: 'must not exceed question.maxLength' })
    .default(() => ({ ...d }));
}

/** Accepted records wanted, by output: MM-IFInstruct records and MM-IFDPO pairs. An absent kind is not counted. */
export const sourceTargetsSchema = z
  .object({
    instruct: z.number().int().min(0).optional(),
    dpo: z.number().int().min(0).optional(),
  })
  .strict();
const RICHNESS_SCORERS = ['imported', 'statistic', 'vlm-tags', 'endpoint'] as const;

/**
 * Semantic-richness selection of a source's images at planning (pipeline/planning/richness.ts), in the role
 * of the paper's IC9600 score and RAM++ tag count.
 */
const richnessSchema = z
  .object({
    /**
     * imported: the authors' (or any) score file; statistic: edge density computed with sharp;
     * vlm-tags: distinct tags the build's `models.richness` endpoint lists; endpoint: an HTTP JSON scorer.
     */
    scorer: z.enum(RICHNESS_SCORERS),
    /** imported: a CSV or JSONL of scores (`ic_ram_output.csv`, `final_output_sorted.csv`...), a local path or s3:// URI. */
    scores: z.string().min(1).optional(),
    /** endpoint: POSTed `{image}` (the normalized image, base64 JPEG), answers `{score, tags?}`. */
    url: z.string().url().optional(),
    /** endpoint: env var holding a bearer token, if the scorer needs one. */
    apiKeyEnv: z
      .string()
      .regex(/^[A-Z_][A-Z0-9_]*$/)
      .optional(),
    /** Keep images scoring at least this. */
    minScore: z.number().optional(),
    /** Keep images with at least this many tags (imported ram_cnt, vlm-tags, endpoint tags). */
    minTags: z.number().int().min(0).optional(),
    /** Keep this best-scoring share: of the whole file for imported scores, of each scored window otherwise. */
    topFraction: z.number().gt(0).max(1).optional(),
    /** Share of scored images expected to pass: planning scores target / this many candidates per window. */
    expectedPassRate: z.number().gt(0).max(1).optional(),
  })
  .strict()
  .superRefine((r, ctx) => {
    if (r.scorer === 'imported' && !r.scores) ctx.addIssue({ code: 'custom', path: ['scores'], message: 'the imported scorer needs a scores file' });
    if (r.scorer === 'endpoint' && !r.url) ctx.addIssue({ code: 'custom', path: ['url'], message: 'the endpoint scorer needs a url' });
    if (r.minScore === undefined && r.minTags === undefined && r.topFraction === undefined) {
      ctx.addIssue({ code: 'custom', path: ['minScore'], message: 'set minScore, minTags or topFraction' });
    }
    if (r.scorer === 'statistic' && r.minTags !== undefined) ctx.addIssue({ code: 'custom', path: ['minTags'], message: 'the statistic scorer counts no tags' });
  });
export type RichnessConfig = z.infer<typeof richnessSchema>;

/** The fields every source entry takes, whatever its type; the licence note defaults to the type's. */
export function commonSourceFields<T extends string>(type: T, defaults: SourceDefaults) {
  return {
    type: z.literal(type),
    /**
     * Names this source in records (`source`), the card and the reports; distinct within a build.
     * Default (sourceNames): the type, or `<type>-<n>` for the n-th source of a type that repeats.
     */
    name: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'letters, digits, ".", "_" and "-", at most 64, starting with a letter or digit')
      .optional(),
    /** Dataset root: a local path or s3://bucket/prefix. */
    uri: z.string().min(1),
    licenseNote: z.string().default(defaults.licenseNote),
    /** Samples taken from this source. */
    quota: z.number().int().positive().optional(),
    /** Share of the build's maxSamples taken from this source (relative to the other sources' weights). */
    weight: z.number().positive().optional(),
    /** Accepted records wanted from this source (with the build's `targets`): overrides its weighted share. */
    targets: sourceTargetsSchema.optional(),
    /** Select images by semantic richness at planning (see richnessSchema). */
    richness: richnessSchema.optional(),
    image: imageOverrideSchema.optional(),
    constraintTypes: constraintTypesSchema.optional(),
    /** Which samples are duplicates; the type's default is written into the config (see DEDUPE_POLICIES). */
    dedupe: z.enum(DEDUPE_POLICIES).optional(),
  };
}

/** A type's `layout` field: 'auto' (the default) detects which of `layouts` the root holds. */
export function layoutField<const L extends readonly [string, ...string[]]>(layouts: L) {
  return z.enum(['auto', ...layouts] as unknown as readonly ['auto', ...L]).default('auto');
}
