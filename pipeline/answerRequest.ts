/**
 * The request of an answer or a rejected answer: the reference prompt for a task and its
 * constraints, with the image or without it (the no_image strategy, the vision-dependence check).
 * Its own module: the answer stages and the vision-dependence check both send it.
 */
import type { Stage } from '../config/buildConfig.js';
import { endpointFor } from '../config/endpointRouting.js';
import type { Constraint } from '../domain/constraints/selection.js';
import { renderAnswerPrompt } from '../prompts/answerPrompt.js';
import type { StageContext } from './context.js';
import type { SampleImage } from './sampleImage.js';
import type { StageRequest } from './stageRequest.js';

/** What an answer is for: the instruction, and the dataset's own answer when it has one. */
export interface Task {
  instruction: string;
  reference?: string;
}

/** Attempt 0 sends no seed (the plain request); regenerations send seed = attempt, a new request. */
export function answerRequest(
  ctx: StageContext,
  stage: Extract<Stage, 'answer' | 'rejected'>,
  task: Task,
  constraints: readonly Constraint[],
  image: SampleImage | undefined,
  attempt: number,
): StageRequest {
  return {
    request: {
      stage,
      endpoint: endpointFor(ctx.config, stage),
      prompt: renderAnswerPrompt(task.instruction, constraints, task.reference, ctx.requestLayout),
      image,
      seed: attempt === 0 ? undefined : attempt,
    },
  };
}
