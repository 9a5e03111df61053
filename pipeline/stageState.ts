/**
 * What each stage leaves behind for one sample: its result or its rejection, plus the model calls
 * it made. Stored as one small JSON object per (sample, stage); the next stage reads it, a retried
 * activity finds it and skips the work, and the shard writer assembles records from it.
 */
import type { CallRecord } from '../llm/modelCaller.js';
import type { Constraint } from '../domain/constraints/selection.js';

export const STAGE_NAMES = ['image', 'instruction', 'constraints', 'answer', 'rejected'] as const;
export type StageName = (typeof STAGE_NAMES)[number];

export interface ImageResult {
  sha256: string;
  width: number;
  height: number;
  originalWidth: number;
  originalHeight: number;
}

export interface InstructionResult {
  instruction: string;
  origin: 'generated';
  candidates: string[];
  examples: string[];
}

export interface ConstraintsResult {
  offeredTypes: string[];
  proposed: Constraint[];
  constraints: Constraint[];
  /** Removed by the compatibility pass, with the model's reason. */
  incompatible: Array<Constraint & { reason: string }>;
  /** Valid but beyond the per-sample maximum. */
  trimmed: Constraint[];
}

export interface AnswerResult {
  prompt: string;
  answer: string;
  model: string;
}

export interface RejectedResult extends AnswerResult {
  kept: Constraint[];
  dropped: Constraint[];
}

export interface StageResults {
  image: ImageResult;
  instruction: InstructionResult;
  constraints: ConstraintsResult;
  answer: AnswerResult;
  rejected: RejectedResult;
}

export type StageState<S extends StageName = StageName> =
  | { status: 'ok'; stage: S; result: StageResults[S]; calls: CallRecord[] }
  | { status: 'rejected'; stage: S; reason: string; calls: CallRecord[] };
