/**
 * The request of an answer or a rejected answer: the reference prompt for a task and its
 * constraints, with the image or without it (the no_image strategy, the vision-dependence check).
 * Its own module: the answer stages and the vision-dependence check both send it.
 */
import type { ModelRole } from '../../../config/modelsConfig.js';
import { endpointFor } from '../../../config/endpointRouting.js';
import type { Constraint } from '../../../domain/constraints/selection.js';
import { renderAnswerPrompt } from '../../../prompts/answerPrompt.js';
import type { StageContext } from '../../run/context.js';
import type { SourceSample } from '../../../domain/sample.js';
import type { SampleImage } from '../../run/sampleImage.js';
import type { StageRequest } from '../../run/stageRequest.js';
import type { AnswerResult, StageResults } from '../../run/stageState.js';

/** What an answer is for: the instruction, and the dataset's own answer when it has one. */
export interface Task {
  instruction: string;
  reference?: string;
}

/** A sample's task: the instruction its instruction stage wrote, and the dataset's own answer. */
export function taskOf(sample: SourceSample, prior: Partial<StageResults>): Task {
  return { instruction: prior.instruction!.instruction, reference: sample.originalAnswer };
}

/** Regeneration 0 (the first answer) sends no seed (the plain request); regeneration n sends seed = n, a new request. */
export function answerRequest(
  ctx: StageContext,
  stage: Extract<ModelRole, 'answer' | 'rejected'>,
  task: Task,
  constraints: readonly Constraint[],
  image: SampleImage | undefined,
  regeneration: number,
): StageRequest {
  return {
    request: {
      stage,
      endpoint: endpointFor(ctx.config, stage),
      prompt: renderAnswerPrompt(task.instruction, constraints, task.reference),
      image,
      seed: regeneration === 0 ? undefined : regeneration,
    },
  };
}

/** The reasoning an answer's result carries: only with training.keepReasoning, so other builds' stage states are as before. */
export const keptReasoning = (ctx: StageContext, reasoning: string | null): Pick<AnswerResult, 'reasoning'> => (ctx.config.training.keepReasoning ? { reasoning } : {});
