/**
 * What each stage leaves behind for one sample: its result or its rejection, plus the model calls
 * it made. Stored as one small JSON object per (sample, stage); the next stage reads it, a retried
 * activity finds it and skips the work, and the shard writer assembles records from it.
 */
import type { DedupePolicy } from '../../config/sourceFields.js';
import type { DpoStrategy, DpoValidation } from '../../config/generationConfig.js';
import type { VerifierCall } from '../../domain/constraints/compatibility.js';
import type { Constraint } from '../../domain/constraints/selection.js';
import type { RejectionDetails } from '../../domain/rejection.js';
import type { Verdict, VerdictOrigin, VerificationMethod } from '../../domain/verdict.js';
import type { CallRecord } from '../../llm/callRecord.js';
import type { StageName } from '../../config/stages.js';
import type { NearMiss } from '../../domain/decontamination.js';
import type { ImageOrigin } from '../../domain/sample.js';

export interface ImageResult {
  sha256: string;
  /** Where the image was read from (SourceReader.origin after the read): written in every record as `image_origin`. */
  origin: ImageOrigin;
  width: number;
  height: number;
  originalWidth: number;
  originalHeight: number;
  /** The dedupe key this sample claimed (pipeline/stages/image/imageClaims.ts): commit checks it still holds it. */
  claim?: { key: string; policy: DedupePolicy };
  /** Evaluation images this image came close to without being the same picture (domain/decontamination.ts). */
  nearMisses?: NearMiss[];
}

export interface InstructionResult {
  instruction: string;
  /** Generated for an image without a question, or refined from the dataset's own question. */
  origin: 'generated' | 'refined';
  candidates: string[];
  examples: string[];
  /** Multiturn builds: the chat's questions, one per turn (`instruction` is then the task they make). */
  questions?: string[];
}

/** A constraint ready for verification: how it will be checked, and how that was decided. */
export interface PlannedConstraint extends Constraint {
  method: VerificationMethod;
  /** Rule calls (all must pass); empty for judged constraints. */
  verifiers: VerifierCall[];
  /** Who chose the verifiers: the phrase parser, the Fig. 20 model, or nobody (judged). */
  selection: 'parser' | 'llm' | 'none';
  /** Why a model's choice was refused (a hallucinated function, bad parameters). */
  selectionNote?: string;
}

export interface ConstraintsResult {
  instructionKind: string;
  offeredTypes: string[];
  proposed: Constraint[];
  constraints: PlannedConstraint[];
  /** Removed by the deterministic rules or the model's compatibility pass, with the reason. */
  removed: Array<Constraint & { reason: string; by: 'rules' | 'model' }>;
  /** Valid but beyond the per-sample maximum. */
  trimmed: Constraint[];
}

export interface AnswerResult {
  prompt: string;
  answer: string;
  model: string;
  verdicts: Verdict[];
  passRate: number;
  /** Answers generated, including the accepted one (1 + its regenerations; `attempts`: the stored name). */
  attempts: number;
  /** The first answer's verdicts, when it was regenerated (the quality report's pass rate before regeneration). */
  firstVerdicts?: Verdict[];
  /** The model's reasoning for the answer, with training.keepReasoning only (null: it gave none). */
  reasoning?: string | null;
  /** With `quality.visionDependence`: whether the sample needs its image (pipeline/stages/answer/visionDependence.ts). */
  visionDependence?: VisionDependence;
}

export interface RejectedResult extends AnswerResult {
  strategy: DpoStrategy;
  kept: Constraint[];
  dropped: Constraint[];
  /** Indices of the constraints at stake: the dropped ones, or all of them under no_image. */
  atStake: number[];
  /** The `dpo.validate` rule the pair was kept under. */
  validation: DpoValidation;
  /** Earlier rejected answers refused, by pair rule (pairRules.ts). */
  ruleRejections: Partial<Record<PairRule, number>>;
}

/**
 * The pair rules a rejected answer is kept under (pipeline/stages/rejected/pairRules.ts):
 * `uninformative-pair`, the rejected answer fails no constraint at stake (the dropped ones; all of
 * them under no_image), so the pair has nothing to teach; `chosen-loses`, on some constraint both
 * answers have a verdict for by the same method the chosen answer fails and the rejected one passes,
 * so the pair teaches the opposite there.
 */
export const PAIR_RULES = ['uninformative-pair', 'chosen-loses'] as const;
export type PairRule = (typeof PAIR_RULES)[number];

export type PairJudgement = { kept: true } | { kept: false; rule: PairRule; detail: string };

/** With `quality.visionDependence`: the blind answer's checks (pipeline/stages/answer/visionDependence.ts). */
export interface VisionDependence {
  /** False: the blind answer passed every image-grounded check, so the sample does not need its image. */
  dependent: boolean;
  /** The answer made without the image. */
  blindAnswer: string;
  /**
   * Indices of the image-grounded (judged) constraints and the direct judge's score of the blind answer
   * on each (null: no score); `reusedFrom: "answer"` when the blind answer is the chosen answer's very
   * text and the chosen answer's direct-judge score was reused instead of asking again.
   */
  grounded: Array<{ index: number; passed: boolean | null; reusedFrom?: VerdictOrigin }>;
  /** The judge's score of the blind answer against the reference answer (null: no score). */
  reference: boolean | null;
}

export interface ChatTurnResult {
  turn: number;
  question: string;
  /** The instruction this turn adds, if any. */
  instruction?: string;
  answer: string;
  attempts: number;
  verdicts: Verdict[];
  /** Seed 002's PIF over the instructions in force (1 before the first, Fig. 5). */
  pif: number;
  pair?: TurnPair;
}

export interface TurnPair {
  /** The turn whose instruction the rejected answer's context left out. */
  forgottenTurn: number;
  rejected: string;
  rejectedVerdicts: Verdict[];
  /** The rejected answer's PIF, counted as the chosen one's is (verification.vacuous); absent in states made before. */
  rejectedPif?: number;
  judgement: PairJudgement;
}

/** A multiturn chat (pipeline/stages/chat/chatStage.ts): its instructions, refused candidates and turns. */
export interface ChatResult {
  instructions: Array<{ turn: number; constraint: PlannedConstraint }>;
  /** Candidates refused for the chat (judged, repeated type, conflicting), with the reason. */
  removed: Array<{ type: string; value: string; reason: string }>;
  turns: ChatTurnResult[];
}

export interface StageResults {
  image: ImageResult;
  instruction: InstructionResult;
  constraints: ConstraintsResult;
  answer: AnswerResult;
  rejected: RejectedResult;
  chat: ChatResult;
}

/**
 * `calls` holds every call made for this stage of this sample, including those of earlier
 * executions that a model-call rejection left to try again; `rerun` counts those tries again
 * (absent for the first execution).
 */
export type StageState<S extends StageName = StageName> =
  | { status: 'ok'; stage: S; result: StageResults[S]; calls: CallRecord[]; rerun?: number }
  | { status: 'rejected'; stage: S; reason: string; calls: CallRecord[]; details?: RejectionDetails; rerun?: number };
