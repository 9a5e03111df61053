/**
 * The instruction stage's code in a multiturn build (seed 002): the chat's questions, one per turn,
 * and the task they make (questionStage.ts); a copy of an evaluation question is rejected as
 * contamination. Stored under the stage name `instruction`, which the later stages read.
 */
import { rejectIfContaminated } from '../../decontamination.js';
import { priorImage, type StageCode } from '../stageDefinition.js';
import { runQuestionStage } from './questionStage.js';

export const questionsCode: StageCode<'questions'> = {
  async run(ctx, sample, prior, calls) {
    const result = await runQuestionStage(ctx, sample, await priorImage(ctx, sample, prior), calls);
    await rejectIfContaminated(ctx.config, { texts: [result.instruction, ...(result.questions ?? [])], near: prior.image?.nearMisses });
    return result;
  },
};
