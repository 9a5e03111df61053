/**
 * The instruction step of a single-turn build: instructions generated (Fig. 14) for an image without
 * a question, a dataset's question refined otherwise (pipeline/stages/instruction/instructionStage.ts); a copy of an
 * evaluation question is rejected as contamination.
 */
import { INSTRUCTION_PROMPT_VERSION } from '../../../prompts/instructionPrompt.js';
import { REFINE_PROMPT_VERSION } from '../../../prompts/refinePrompt.js';
import { rejectIfContaminated } from '../../decontamination.js';
import { instructionRequest, runInstructionStage } from './instructionStage.js';
import { priorImage, type StageDefinition } from '../stageDefinition.js';

export const instructionStep: StageDefinition<'instruction'> = {
  name: 'instruction',
  summary: 'the task: generated candidates and one picked (Fig. 14), or the dataset question refined',
  buildsOn: ['image'],
  modelRoles: ['instruction'],
  prompts: [INSTRUCTION_PROMPT_VERSION, REFINE_PROMPT_VERSION],
  async run(ctx, sample, prior, calls) {
    const result = await runInstructionStage(ctx, sample, await priorImage(ctx, prior), calls);
    // The task as generated or refined: a copy of an evaluation question is contamination too.
    await rejectIfContaminated(ctx.config, { texts: [result.instruction] });
    return result;
  },
  firstRequest: async (ctx, sample, prior) => instructionRequest(ctx, sample, await priorImage(ctx, prior)),
};
