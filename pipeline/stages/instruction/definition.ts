/**
 * The instruction stage's code (single-turn builds): instructions generated (Fig. 14) for an image
 * without a question, a dataset's question refined otherwise (instructionStage.ts); a copy of an
 * evaluation question is rejected as contamination.
 */
import { rejectIfContaminated } from '../../decontamination.js';
import { priorImage, type StageCode } from '../stageDefinition.js';
import { instructionRequest, runInstructionStage } from './instructionStage.js';

export const instructionCode: StageCode<'instruction'> = {
  async run(ctx, sample, prior, calls) {
    const result = await runInstructionStage(ctx, sample, await priorImage(ctx, sample, prior), calls);
    // The task as generated or refined: a copy of an evaluation question is contamination too.
    await rejectIfContaminated(ctx.config, { texts: [result.instruction], near: prior.image?.nearMisses });
    return result;
  },
  firstRequest: async (ctx, sample, prior) => instructionRequest(ctx, sample, await priorImage(ctx, sample, prior)),
};
