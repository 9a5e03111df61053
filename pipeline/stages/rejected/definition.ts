/**
 * The rejected stage's code: the DPO pair's rejected answer under a seeded strategy, kept only if
 * the pair passes the pair rules (rejectedStage.ts, pairRules.ts).
 */
import { taskOf } from '../answer/answerRequest.js';
import { priorImage, type StageCode } from '../stageDefinition.js';
import { rejectedRequest, runRejectedStage } from './rejectedStage.js';

export const rejectedCode: StageCode<'rejected'> = {
  run: async (ctx, sample, prior, calls) =>
    runRejectedStage(ctx, sample, taskOf(sample, prior), prior.constraints!.constraints, prior.answer!, await priorImage(ctx, sample, prior), calls),
  firstRequest: async (ctx, sample, prior) => rejectedRequest(ctx, sample, taskOf(sample, prior), prior.constraints!.constraints, await priorImage(ctx, sample, prior)),
};
