/**
 * The pipeline stages, one pure descriptor each, and the stages of each build mode in order: the one
 * list. Workflow code imports it (no model calls, no storage, no zod); pipeline/stages/<stage>/ adds
 * each stage's run code (registry.ts), config/endpointRouting.ts routes stages by their first model
 * role, and docs/architecture.md's stage table is generated from it (`npm run docs:config`).
 */
import type { PromptKind } from '../domain/promptKinds.js';
import type { BuildMode } from './buildConfig.js';
import type { ModelRole } from './modelsConfig.js';

interface StageDescriptor {
  /** Names the descriptor (the multiturn instruction stage is `questions`); unique across modes. */
  readonly key: string;
  /** The stage's name: its stored state's (`_work/samples/<id>/<name>.json`) and its slice activities' `stage`. */
  readonly name: string;
  /** What the stage produces, for the docs' stage table. */
  readonly summary: string;
  /** The stages whose results it reads; a sample one of them rejected is not run here (blocked). */
  readonly buildsOn: readonly string[];
  /**
   * The model roles its calls use (`models.<role>` picks each one's endpoint). The first is its own:
   * its endpoint's `taskQueue` runs the stage's activities, and its `batch` sends the first call
   * through the Batch API.
   */
  readonly modelRoles: readonly ModelRole[];
  /** Whether the Batch API can send the stage's first call ahead of it (its code then gives `firstRequest`). */
  readonly batchable: boolean;
  /** The prompts its requests render (domain/promptKinds.ts gives each one's version). */
  readonly prompts: readonly PromptKind[];
  /** A rejection here drops only the sample's DPO pair: the sample itself stays accepted. */
  readonly rejectsPairOnly?: true;
  /**
   * The stage (one it builds on) beside whose calls its first call (`firstRequest`) is sent: that call
   * reads nothing that stage produces, and its reply waits in the cache for this stage. Unless this
   * stage's own endpoint sends it through the Batch API or runs on another task queue. A sample that
   * stage rejects paid for it in vain.
   */
  readonly firstRequestBeside?: string;
}

const IMAGE = {
  key: 'image',
  name: 'image',
  summary: 'the source image read, checked, normalized to an RGB JPEG and stored by content hash; its dedupe claim',
  buildsOn: [],
  modelRoles: [],
  batchable: false,
  prompts: [],
} as const satisfies StageDescriptor;

const INSTRUCTION = {
  key: 'instruction',
  name: 'instruction',
  summary: 'the task: generated candidates and one picked (Fig. 14), or the dataset question refined',
  buildsOn: ['image'],
  modelRoles: ['instruction'],
  batchable: true,
  prompts: ['instructions', 'refined_instruction'],
} as const satisfies StageDescriptor;

const QUESTIONS = {
  key: 'questions',
  name: 'instruction',
  summary: "the chat's questions, one per turn, and the task they make",
  buildsOn: ['image'],
  modelRoles: ['instruction'],
  batchable: false,
  prompts: ['chat_questions'],
} as const satisfies StageDescriptor;

const CONSTRAINTS = {
  key: 'constraints',
  name: 'constraints',
  summary: 'the constraints (Fig. 15), filtered for compatibility, each with how it will be verified',
  buildsOn: ['image', 'instruction'],
  modelRoles: ['constraints', 'compatibility', 'verifier'],
  batchable: true,
  prompts: ['constraints', 'compatibility', 'verifier_selection'],
} as const satisfies StageDescriptor;

const ANSWER = {
  key: 'answer',
  name: 'answer',
  summary: 'the chosen answer, verified against every constraint and regenerated below the pass threshold',
  buildsOn: ['image', 'instruction', 'constraints'],
  modelRoles: ['answer', 'judge'],
  batchable: true,
  prompts: ['answer', 'direct_judge', 'compare_judge'],
} as const satisfies StageDescriptor;

const REJECTED = {
  key: 'rejected',
  name: 'rejected',
  summary: "the DPO pair's rejected answer (constraints dropped or the image removed), kept under the pair rules",
  buildsOn: ['image', 'instruction', 'constraints', 'answer'],
  modelRoles: ['rejected', 'judge'],
  batchable: true,
  prompts: ['answer', 'direct_judge'],
  rejectsPairOnly: true,
  // The rejected answer drops constraints from the chosen answer's prompt (or its image): it does not read the chosen answer.
  firstRequestBeside: 'answer',
} as const satisfies StageDescriptor;

const CHAT = {
  key: 'chat',
  name: 'chat',
  summary: 'every answer of the chat, scored per turn, with the turn-level pairs',
  buildsOn: ['image', 'instruction', 'constraints'],
  modelRoles: ['answer', 'rejected'],
  batchable: false,
  prompts: ['chat_answer'],
} as const satisfies StageDescriptor;

/** The stages of each build mode, in the order they run. */
export const STAGES = {
  single: [IMAGE, INSTRUCTION, CONSTRAINTS, ANSWER, REJECTED],
  multiturn: [IMAGE, QUESTIONS, CONSTRAINTS, CHAT],
} as const satisfies Record<BuildMode, readonly StageDescriptor[]>;

type AnyStage = (typeof STAGES)[BuildMode][number];
export type StageKey = AnyStage['key'];
export type StageName = AnyStage['name'];
/** The descriptor of the stage with key `K`. */
export type StageOf<K extends StageKey> = Extract<AnyStage, { key: K }>;

/** Every descriptor once, in the order of the modes' lists. */
export const ALL_STAGES: readonly AnyStage[] = [...new Set<AnyStage>(Object.values(STAGES).flat())];

const namesOf = <T extends readonly { name: string }[]>(stages: T) => stages.map((s) => s.name) as { [I in keyof T]: T[I]['name'] };

/** The stages of a single-turn build, by name, in order. */
export const STAGE_NAMES = namesOf(STAGES.single);
/** The stages of a multiturn build, by name, in order. */
export const MULTITURN_STAGE_NAMES = namesOf(STAGES.multiturn);
/** Every stage a sample can have a state for, whatever the build's mode. */
export const ALL_STAGE_NAMES: readonly StageName[] = [...new Set(ALL_STAGES.map((s) => s.name))];

/** The stages whose rejection drops only a pair (rejectsPairOnly), by name. */
const PAIR_ONLY_STAGES: ReadonlySet<StageName> = new Set(ALL_STAGES.filter((s) => 'rejectsPairOnly' in s).map((s) => s.name));

/**
 * What the stages' counts of a slice say of its samples before any commit: rejected by a stage
 * (each sample once: the later stages count it as blocked), or through the last stage of `order`
 * and accepted (a rejection there that drops only the DPO pair leaves the sample accepted). The
 * commit may still leave out a few of the accepted (a duplicate image, the held-out split).
 */
export function sampleFates(stages: Partial<Record<StageName, { ok: number; rejected: number }>>, order: readonly StageName[]): { accepted: number; rejected: number } {
  let rejected = 0;
  for (const [stage, o] of Object.entries(stages) as Array<[StageName, { rejected: number }]>) if (!PAIR_ONLY_STAGES.has(stage)) rejected += o.rejected;
  const last = order.at(-1);
  const end = last === undefined ? undefined : stages[last];
  const accepted = end ? end.ok + (PAIR_ONLY_STAGES.has(last!) ? end.rejected : 0) : 0;
  return { accepted, rejected };
}

/** The stages a build of this mode runs, by name, in order. */
export function stagesFor(mode: BuildMode): readonly StageName[] {
  return STAGES[mode].map((s) => s.name);
}
