/**
 * The answer stage's code: the chosen answer, verified (rules, judges) and regenerated below
 * `verification.passThreshold`; optionally checked for vision dependence (answerStage.ts).
 */
import { priorImage, type StageCode } from '../stageDefinition.js';
import { answerRequest, taskOf } from './answerRequest.js';
import { runAnswerStage } from './answerStage.js';

export const answerCode: StageCode<'answer'> = {
  run: async (ctx, sample, prior, calls) => runAnswerStage(ctx, taskOf(sample, prior), prior.constraints!.constraints, await priorImage(ctx, sample, prior), calls),
  firstRequest: async (ctx, sample, prior) => answerRequest(ctx, 'answer', taskOf(sample, prior), prior.constraints!.constraints, await priorImage(ctx, sample, prior), 0),
};
