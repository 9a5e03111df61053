/**
 * The user turn written into training records, separate from the prompt answers are generated with.
 * MM-IFEval's inference builds its prompt with `make_prompt_v2` (the instruction, then each
 * constraint's text, joined by single spaces; shared NOTES §4, Fig. 19), so a model trained on that
 * form meets the same form at evaluation. `numbered` keeps the generation form; `mixed` draws one of
 * the two per sample from the build seed, for robustness to either.
 */
import type { TrainingPromptTemplate } from '../config/generationConfig.js';
import type { Constraint } from '../domain/constraints/selection.js';
import { rngFor } from '../domain/random.js';
import { answerPromptText } from './answerPrompt.js';

export type WrittenTemplate = Exclude<TrainingPromptTemplate, 'mixed'>;

function inlinePromptText(instruction: string, constraints: readonly Pick<Constraint, 'value'>[]): string {
  return [instruction, ...constraints.map((c) => c.value)].join(' ');
}

/** The template a sample's record uses: `mixed` resolves by (seed, sample id), never by order. */
export function templateForSample(template: TrainingPromptTemplate, seed: number, sampleId: string): WrittenTemplate {
  if (template !== 'mixed') return template;
  return rngFor(seed, sampleId, 'training-template')() < 0.5 ? 'inline' : 'numbered';
}

export function trainingPromptText(template: WrittenTemplate, instruction: string, constraints: readonly Constraint[]): string {
  return template === 'inline' ? inlinePromptText(instruction, constraints) : answerPromptText(instruction, constraints);
}
