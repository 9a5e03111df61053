/**
 * The instruction step of a multiturn build (seed 002): the chat's questions, one per turn, and the
 * task they make (pipeline/stages/questions/questionStage.ts); a copy of an evaluation question is rejected
 * as contamination. Stored under the step name `instruction`, which the later steps read.
 */
import { CHAT_QUESTIONS_PROMPT_VERSION } from '../../../prompts/chatQuestionsPrompt.js';
import { rejectIfContaminated } from '../../decontamination.js';
import { runQuestionStage } from './questionStage.js';
import { priorImage, type StageDefinition } from '../stageDefinition.js';

export const questionsStep: StageDefinition<'instruction'> = {
  name: 'instruction',
  summary: "the chat's questions, one per turn, and the task they make",
  buildsOn: ['image'],
  modelRoles: ['instruction'],
  prompts: [CHAT_QUESTIONS_PROMPT_VERSION],
  async run(ctx, sample, prior, calls) {
    const result = await runQuestionStage(ctx, sample, await priorImage(ctx, prior), calls);
    await rejectIfContaminated(ctx.config, { texts: [result.instruction, ...(result.questions ?? [])] });
    return result;
  },
};
