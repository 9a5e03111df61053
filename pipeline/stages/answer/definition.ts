/**
 * The answer step: the chosen answer, verified (rules, judges) and regenerated below
 * `verification.passThreshold`; optionally checked for vision dependence (pipeline/stages/answer/answerStage.ts).
 */
import { ANSWER_PROMPT_VERSION } from '../../../prompts/answerPrompt.js';
import { COMPARE_JUDGE_PROMPT_VERSION } from '../../../prompts/compareJudgePrompt.js';
import { DIRECT_JUDGE_PROMPT_VERSION } from '../../../prompts/directJudgePrompt.js';
import { answerRequest, taskOf } from './answerRequest.js';
import { runAnswerStage } from './answerStage.js';
import { priorImage, type StageDefinition } from '../stageDefinition.js';

export const answerStep: StageDefinition<'answer'> = {
  name: 'answer',
  summary: 'the chosen answer, verified against every constraint and regenerated below the pass threshold',
  buildsOn: ['image', 'instruction', 'constraints'],
  modelRoles: ['answer', 'judge'],
  prompts: [ANSWER_PROMPT_VERSION, DIRECT_JUDGE_PROMPT_VERSION, COMPARE_JUDGE_PROMPT_VERSION],
  run: async (ctx, sample, prior, calls) => runAnswerStage(ctx, taskOf(sample, prior), prior.constraints!.constraints, await priorImage(ctx, prior), calls),
  firstRequest: async (ctx, sample, prior) => answerRequest(ctx, 'answer', taskOf(sample, prior), prior.constraints!.constraints, await priorImage(ctx, prior), 0),
};
