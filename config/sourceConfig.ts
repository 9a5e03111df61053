/**
 * The `sources[]` entries of a build config: which dataset, where, in which layout, how many samples
 * it contributes, and how its images, questions and constraint types are judged. Pure and
 * deterministic (imported by workflow code).
 *
 * Per-source defaults (sourceDefaults) are written into the parsed config, not applied later: the
 * resolved values are then part of the stored config and of its fingerprint, so a later release that
 * changes a default cannot silently mix two policies under one buildId.
 */
import { z } from 'zod';
import { CONSTRAINT_KEYS } from '../domain/constraints/catalogue.js';
import { imageSchema, type ImageConfig } from './imageConfig.js';

export const SOURCE_TYPES = ['cc3m', 'allava', 'chartqa', 'geo170k', 'rico', 'multiui'] as const;
export type SourceType = (typeof SOURCE_TYPES)[number];

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
export const DEDUPE_POLICIES = ['image', 'image+question', 'none'] as const;
export type DedupePolicy = (typeof DEDUPE_POLICIES)[number];

const QUESTIONS: QuestionPolicy = { minLength: 8, maxLength: 1000, dropMultipleChoice: true, dropFewShot: true };
const QUESTION_DEFAULTS = {
  allava: QUESTIONS,
  // ChartQA queries are one-liners; a long one is a pasted table or a template.
  chartqa: { ...QUESTIONS, maxLength: 500 },
  // Every Geo170K question is multiple choice: keep the stem, the refinement stage makes it open.
  geo170k: { ...QUESTIONS, dropMultipleChoice: false },
  multiui: QUESTIONS,
} satisfies Partial<Record<SourceType, QuestionPolicy>>;

/** Measurable, structural constraints: what a chart or a geometry answer can honestly carry. */
const STRUCTURE = [
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
const SCREEN = [...STRUCTURE, 'perspective_requirement', 'situation_requirement', 'prior_condition', 'tone_requirement', 'case_requirements'];

const DEFAULTS: Record<SourceType, SourceDefaults> = {
  cc3m: {
    dedupe: 'image',
    licenseNote: 'CC3M: images owned by their original publishers; captions CC BY 4.0 (Google)',
    image: {},
  },
  allava: {
    dedupe: 'image+question',
    licenseNote: 'ALLaVA-4V: images owned by third parties (LAION, Vision-FLAN sources); GPT-4V annotations Apache-2.0 per the dataset card',
    image: {},
    question: QUESTION_DEFAULTS.allava,
  },
  chartqa: {
    dedupe: 'image+question',
    licenseNote: 'ChartQA: GPL-3.0; charts crawled from their publishers (see dataset card)',
    // Charts are often wide (time series) and sometimes small exports.
    image: { minShortSide: 128, maxAspectRatio: 4 },
    constraintTypes: [...STRUCTURE, 'precision', 'scientific_notation', 'perspective_requirement', 'case_requirements'],
    question: QUESTION_DEFAULTS.chartqa,
  },
  geo170k: {
    dedupe: 'image+question',
    licenseNote: 'Geo170K: licence not declared by its authors; diagrams from GeoQA+ and Geometry3K (see dataset card)',
    // Small black-on-white line drawings: little variance, short sides well under 224, some long strips.
    image: { minShortSide: 64, maxAspectRatio: 6, minChannelStdDev: 2 },
    // Precision, maths, format and length; no roleplay, tone or style rewrites of a proof.
    constraintTypes: [...STRUCTURE, 'precision', 'scientific_notation'],
    question: QUESTION_DEFAULTS.geo170k,
  },
  rico: {
    dedupe: 'image',
    licenseNote: 'RICO: CC BY 4.0 (interactionmining.org)',
    image: { maxAspectRatio: 4 },
    constraintTypes: SCREEN,
  },
  multiui: {
    dedupe: 'image+question',
    licenseNote: 'MultiUI: ODC-BY per its dataset card; webpage screenshots owned by their sites (see dataset card)',
    // Full-page screenshots are tall; at 1024 px their text would be unreadable.
    image: { maxAspectRatio: 6, maxLongSide: 2048 },
    constraintTypes: SCREEN,
    question: QUESTION_DEFAULTS.multiui,
  },
};

/** The defaults written into a source's parsed config when it does not set the field itself. */
export function sourceDefaults(type: SourceType): SourceDefaults {
  return DEFAULTS[type];
}

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
const relativePath = z
  .string()
  .min(1)
  .refine((p) => !p.startsWith('/') && !p.split('/').includes('..') && !p.includes('\\'), 'must be a path relative to the dataset root, without ".."');

function questionSchema(d: QuestionPolicy) {
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
export type RecordTargets = z.infer<typeof sourceTargetsSchema>;

export const RICHNESS_SCORERS = ['imported', 'statistic', 'vlm-tags', 'endpoint'] as const;

/**
 * Semantic-richness selection of a source's images at planning (pipeline/planning/richness.ts), in the role
 * of the paper's IC9600 score and RAM++ tag count.
 */
export const richnessSchema = z
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

function common<T extends SourceType>(type: T) {
  return {
    type: z.literal(type),
    /** Dataset root: a local path or s3://bucket/prefix. */
    uri: z.string().min(1),
    licenseNote: z.string().default(DEFAULTS[type].licenseNote),
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

/**
 * `layout` belongs to CC3M alone; declaring it (always absent) on the other types keeps
 * `source.layout` readable on any source, and gives a clear message when set by mistake.
 */
const cc3mOnlyLayout = z.never({ error: 'layout applies to cc3m sources only' }).optional();

const cc3mSchema = z
  .object({
    ...common('cc3m'),
    /** Which img2dataset layout the root holds; 'auto' detects it. */
    layout: z.enum(['auto', 'webdataset', 'files', 'flat']).default('auto'),
  })
  .strict();

const allavaSchema = z
  .object({
    ...common('allava'),
    layout: cc3mOnlyLayout,
    /** JSON arrays relative to the root; absent: the ALLaVA-4V files (LAION and Vision-FLAN, Instruct and Caption) present at the root. */
    files: z.array(relativePath).min(1).optional(),
    question: questionSchema(QUESTION_DEFAULTS.allava),
  })
  .strict();

const chartqaSchema = z
  .object({
    ...common('chartqa'),
    layout: cc3mOnlyLayout,
    splits: z
      .array(z.enum(['train', 'val', 'test']))
      .min(1)
      .default(['train']),
    sets: z
      .array(z.enum(['human', 'augmented']))
      .min(1)
      .default(['human', 'augmented']),
    /** Attach the chart's data table (`tables/<name>.csv`, cut to a few KB) as grounding. */
    attachTables: z.boolean().default(true),
    question: questionSchema(QUESTION_DEFAULTS.chartqa),
  })
  .strict();

const geo170kSchema = z
  .object({
    ...common('geo170k'),
    layout: cc3mOnlyLayout,
    /** LLaVA-style JSON arrays relative to the root (also: alignment.json). */
    files: z.array(relativePath).min(1).default(['qa_tuning.json']),
    question: questionSchema(QUESTION_DEFAULTS.geo170k),
  })
  .strict();

const ricoSchema = z
  .object({
    ...common('rico'),
    layout: cc3mOnlyLayout,
  })
  .strict();

const multiuiSchema = z
  .object({
    ...common('multiui'),
    layout: cc3mOnlyLayout,
    /** LLaVA-style JSON arrays relative to the root. Required: the gated release's file names are not fixed. */
    files: z.array(relativePath).min(1),
    /** Task types (read from each record's id) kept; the others are dropped and counted. */
    keepTasks: z
      .array(z.string().regex(/^[a-z][a-z0-9_]*$/, 'a task type such as webqa'))
      .min(1)
      .default(['webqa', 'embed_qa', 'meta_generate']),
    question: questionSchema(QUESTION_DEFAULTS.multiui),
  })
  .strict();

export const sourceSchema = z
  .discriminatedUnion('type', [cc3mSchema, allavaSchema, chartqaSchema, geo170kSchema, ricoSchema, multiuiSchema])
  .superRefine((s, ctx) => {
    if (s.quota !== undefined && s.weight !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['weight'], message: 'set either quota (a sample count) or weight (a share of maxSamples), not both' });
    }
  })
  .transform(withDefaults);

export type SourceConfig = z.output<typeof sourceSchema>;
export type SourceConfigOf<T extends SourceType> = Extract<SourceConfig, { type: T }>;
export type Cc3mSourceConfig = SourceConfigOf<'cc3m'>;

/**
 * Writes the type's image and constraint-type defaults into the config. Nothing is added where the
 * type has no default (CC3M), so existing CC3M configs keep their fingerprint.
 */
function withDefaults<S extends { type: SourceType; image?: Partial<ImageConfig>; constraintTypes?: string[]; dedupe?: DedupePolicy }>(s: S): S {
  const d = DEFAULTS[s.type];
  // 'image' was the only behaviour before policies existed: left implicit so those configs keep their fingerprint.
  const dedupe = s.dedupe ?? (d.dedupe === 'image' ? undefined : d.dedupe);
  const image = { ...d.image, ...s.image };
  const constraintTypes = s.constraintTypes ?? (d.constraintTypes ? [...d.constraintTypes] : undefined);
  return {
    ...s,
    ...(Object.keys(image).length > 0 ? { image } : {}),
    ...(constraintTypes ? { constraintTypes } : {}),
    ...(dedupe ? { dedupe } : {}),
  };
}

/** The source's dedupe policy: its own, else its type's default. */
export function dedupePolicy(source: SourceConfig): DedupePolicy {
  return source.dedupe ?? DEFAULTS[source.type].dedupe;
}

/** The image settings for one source's samples: the build's, with the source's overrides on top. */
export function sourceImageConfig(build: ImageConfig, source: SourceConfig): ImageConfig {
  return { ...build, ...source.image };
}
