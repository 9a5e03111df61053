/**
 * Stages 4 and 5: the chosen answer follows every constraint; the rejected answer (for DPO) is
 * generated with a seeded ceil(n * dropFraction) of them removed, and records which.
 */
import { endpointFor, type Stage } from '../config/buildConfig.js';
import { dropConstraints, type Constraint } from '../domain/constraints/selection.js';
import type { SourceSample } from '../domain/sample.js';
import type { CallRecord } from '../llm/modelCaller.js';
import { answerPromptText, renderAnswerPrompt } from '../prompts/answerPrompt.js';
import { sampleRng, type StageContext } from './context.js';
import type { SampleImage } from './sampleImage.js';
import type { AnswerResult, RejectedResult } from './stageState.js';

async function answer(
  ctx: StageContext,
  stage: Extract<Stage, 'answer' | 'rejected'>,
  instruction: string,
  constraints: readonly Constraint[],
  image: SampleImage,
  calls: CallRecord[],
): Promise<AnswerResult> {
  const endpoint = endpointFor(ctx.config, stage);
  const text = await ctx.models.text({ stage, endpoint, prompt: renderAnswerPrompt(instruction, constraints), image }, calls);
  return { prompt: answerPromptText(instruction, constraints), answer: text, model: endpoint.model };
}

export function runAnswerStage(
  ctx: StageContext,
  instruction: string,
  constraints: readonly Constraint[],
  image: SampleImage,
  calls: CallRecord[],
): Promise<AnswerResult> {
  return answer(ctx, 'answer', instruction, constraints, image, calls);
}

export async function runRejectedStage(
  ctx: StageContext,
  sample: SourceSample,
  instruction: string,
  constraints: readonly Constraint[],
  image: SampleImage,
  calls: CallRecord[],
): Promise<RejectedResult> {
  const { kept, dropped } = dropConstraints(sampleRng(ctx, sample.sampleId, 'dpo-drop'), constraints, ctx.config.dpo.dropFraction);
  const result = await answer(ctx, 'rejected', instruction, kept, image, calls);
  return { ...result, kept, dropped };
}
