/**
 * The records a build writes, as data: an SFT record, a DPO pair, a rejection (single-turn), a chat
 * and a turn-level pair (multiturn), and what assembling one sample yields. The contract between
 * record assembly (output/commit/), the formats that write records (output/formats/), the reports
 * and the viewer that read them back; types only, beside the one token no record text may hold.
 */
import type { RichnessScore } from '../../domain/richness.js';
import type { ImageOrigin } from '../../domain/sample.js';
import type { CallRecord } from '../../llm/callRecord.js';
import type { StageName } from '../../config/stages.js';
import type { Verdict } from '../../domain/verdict.js';
import type { PlannedConstraint, StageState } from '../../pipeline/run/stageState.js';
import type { Constraint } from '../../domain/constraints/selection.js';
import type { ModelCallFault } from '../../domain/rejection.js';
import type { WrittenTemplate } from '../../prompts/trainingPrompt.js';

/** The fields every written record starts with: which record of which source, and its image. */
export interface SourcedRecord {
  id: string;
  source: string;
  source_id: string;
  license: string;
  image_path: string;
  image_sha256: string;
  /** Where the image came from: file, member or row, Hub revision (ImageOrigin). */
  image_origin: ImageOrigin;
}

export interface InstructRecord extends SourcedRecord {
  instruction: string;
  instruction_origin: string;
  /** The dataset's own question and answer, when it had them (kept for grounding and audit). */
  original_instruction: string | null;
  original_answer: string | null;
  /** With how each is verified (method, verifier calls) and who chose the calls. */
  constraints: PlannedConstraint[];
  /** The user turn of training: the instruction and constraints in the `prompt_template` form. */
  prompt: string;
  prompt_template: WrittenTemplate;
  /** The prompt the answer was generated from (the numbered reference form). */
  generation_prompt: string;
  answer: string;
  /** The answering model's reasoning, apart from the answer: with training.keepReasoning only (null: it gave none). */
  answer_reasoning?: string | null;
  /** One per constraint, for the accepted answer. */
  verdicts: Verdict[];
  pass_rate: number;
  /** Answers generated until one passed the post-filter. */
  answer_attempts: number;
  models: Record<'instruction' | 'constraints' | 'compatibility' | 'verifier' | 'answer' | 'judge', string>;
  simulated: boolean;
  /** The image's richness score, when planning selected it by richness (sources[].richness); else null. */
  image_richness: RichnessScore | null;
  /**
   * With `quality.visionDependence`: false when the sample was answered as well without its image
   * (pipeline/stages/answer/visionDependence.ts); null when the build did not check.
   */
  vision_dependent: boolean | null;
}

export interface DpoRecord extends Omit<InstructRecord, 'answer' | 'models' | 'answer_attempts' | 'answer_reasoning'> {
  sample_id: string;
  chosen: string;
  rejected: string;
  /** The generation prompt of the rejected answer: the same task without `dropped_constraints`. */
  rejected_prompt: string;
  dropped_constraints: Constraint[];
  /** How the rejected answer was made: drop33, drop66, drop100 or no_image. */
  strategy: string;
  /**
   * Verdicts on the constraints at stake and on every rule-checked constraint. Under the strict
   * rule, one at stake failed and none is passed where the chosen answer failed.
   */
  rejected_verdicts: Verdict[];
  chosen_model: string;
  rejected_model: string;
  /** `dpo.validate` the pair was kept under: strict (pairRules.ts) or paper (unvalidated). */
  pair_validation: string;
  /** Rejected answers generated, including the kept one. */
  rejected_attempts: number;
  /** Earlier rejected answers refused, by pair rule. */
  pair_rule_rejections: Record<string, number>;
  /** The models' reasoning for the two answers: with training.keepReasoning only (null: none given). */
  chosen_reasoning?: string | null;
  rejected_reasoning?: string | null;
}

/**
 * What a refused sample passed before it was refused, written on its rejection (each field absent
 * when the sample never passed that stage): the rejects file shows what was refused without the
 * resume state, and the viewer reads it from there.
 */
export interface RejectedContext {
  /** The image stage's normalized copy (`_work/images/...`, relative to the dataset root): a refused sample's image is not published in images/. */
  staged_image_path?: string;
  instruction?: string;
  constraints?: Array<Pick<PlannedConstraint, 'type' | 'value' | 'method'>>;
}

export interface RejectRecord extends RejectedContext {
  id: string;
  source: string;
  source_id: string;
  /** 'sample': no record at all; 'pair': the SFT record exists but no DPO pair. */
  kind: 'sample' | 'pair';
  stage: StageName;
  reason: string;
  verdicts?: Verdict[];
  /** A regenerated answer's first attempt's verdicts. */
  first_verdicts?: Verdict[];
  /** The DPO strategy of a discarded pair. */
  strategy?: string;
  /** A discarded pair's rejected answers refused, by pair rule (the DPO records' name). */
  pair_rule_rejections?: Record<string, number>;
  /** Indices of a discarded pair's constraints at stake. */
  at_stake?: number[];
  /** The failed model call behind the rejection: endpoint, model, status, masked excerpt. */
  model_call?: ModelCallFault;
}

export type SampleStates = Partial<{ [S in StageName]: StageState<S> }>;

export interface AssembledSample {
  /** What the sample passed: written on its rejection, by assembly or by a later trim (output/commit/overTarget.ts). */
  passed: RejectedContext;
  instruct?: InstructRecord;
  dpo?: DpoRecord;
  reject?: RejectRecord;
  calls: CallRecord[];
}

/**
 * Trainers read `<image>` in any turn as an image slot (LLaMA-Factory requires as many as the row has
 * images), so a text that contains it literally cannot be written as a training row.
 */
export const IMAGE_TOKEN = '<image>';

export interface ChatTurnRecord {
  /** 1-based question turn. */
  turn: number;
  question: string;
  /** The global instruction added at this turn (written before its question), or null. */
  instruction: string | null;
  answer: string;
  /** Answers generated until one reached chat.pifThreshold. */
  attempts: number;
  /** One per instruction in force at this turn, in the order given (index = position in `instructions`). */
  verdicts: Verdict[];
  /** Seed 002's PIF of the answer: followed / in force (1 before any instruction, Fig. 5). */
  pif: number;
}

export interface ChatRecord extends SourcedRecord {
  /** The system message the answers were generated under (instructions persist). */
  system: string;
  /** The chat's global instructions, with the turn that adds each and how it is verified. */
  instructions: Array<{ turn: number; type: string; value: string; verifiers: Array<{ func: string; params: unknown[] }> }>;
  /** Candidates refused for this chat (judged, repeated type, conflicting), with the reason. */
  removed_instructions: Array<{ type: string; value: string; reason: string }>;
  turns: ChatTurnRecord[];
  models: Record<'instruction' | 'constraints' | 'compatibility' | 'verifier' | 'answer' | 'rejected', string>;
  simulated: boolean;
  image_richness: RichnessScore | null;
}

/** A turn-level pair: the chat up to the turn, its chosen answer, and one made without an earlier instruction. */
export interface ChatPairRecord extends SourcedRecord {
  chat_id: string;
  system: string;
  turn: number;
  /** The earlier turns (question with its instruction, kept answer) and this turn's user message. */
  history: Array<{ question: string; instruction: string | null; answer: string }>;
  question: string;
  instruction: string | null;
  chosen: string;
  rejected: string;
  /** The turn whose instruction the rejected answer's context left out, and that instruction. */
  forgotten_turn: number;
  forgotten_instruction: { type: string; value: string };
  chosen_verdicts: Verdict[];
  rejected_verdicts: Verdict[];
  chosen_pif: number;
  rejected_pif: number;
  simulated: boolean;
}

export interface AssembledChat {
  chat?: ChatRecord;
  pairs: ChatPairRecord[];
  rejects: RejectRecord[];
  calls: CallRecord[];
}
