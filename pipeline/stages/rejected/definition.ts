/**
 * The rejected step: the DPO pair's rejected answer under a seeded strategy, kept only if the pair
 * passes the pair rules (pipeline/stages/rejected/rejectedStage.ts, pairRules.ts).
 */
import { ANSWER_PROMPT_VERSION } from '../../../prompts/answerPrompt.js';
import { DIRECT_JUDGE_PROMPT_VERSION } from '../../../prompts/directJudgePrompt.js';
import { taskOf } from '../answer/answerRequest.js';
import { rejectedRequest, runRejectedStage } from './rejectedStage.js';
import { priorImage, type StageDefinition } from '../stageDefinition.js';

export const rejectedStep: StageDefinition<'rejected'> = {
  name: 'rejected',
  summary: "the DPO pair's rejected answer (constraints dropped or the image removed), kept under the pair rules",
  buildsOn: ['image', 'instruction', 'constraints', 'answer'],
  modelRoles: ['rejected', 'judge'],
  prompts: [ANSWER_PROMPT_VERSION, DIRECT_JUDGE_PROMPT_VERSION],
  run: async (ctx, sample, prior, calls) =>
    runRejectedStage(ctx, sample, taskOf(sample, prior), prior.constraints!.constraints, prior.answer!.verdicts, await priorImage(ctx, prior), calls),
  firstRequest: async (ctx, sample, prior) => rejectedRequest(ctx, sample, taskOf(sample, prior), prior.constraints!.constraints, await priorImage(ctx, prior)),
};
