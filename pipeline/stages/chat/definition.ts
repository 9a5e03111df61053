/**
 * The chat stage's code (multiturn builds): every answer of the chat, each turn scored against the
 * instructions in force and regenerated below its PIF threshold, with its turn-level DPO pairs
 * (chatStage.ts).
 */
import { chatSettings } from '../../../config/generationConfig.js';
import { priorImage, type StageCode } from '../stageDefinition.js';
import { runChatStage } from './chatStage.js';

export const chatCode: StageCode<'chat'> = {
  async run(ctx, sample, prior, calls) {
    const image = await priorImage(ctx, sample, prior);
    const questions = prior.instruction!.questions;
    if (!questions) throw new Error(`sample ${sample.sampleId}: the chat stage needs the questions of a multiturn instruction stage`);
    const { maxInstructions, pifThreshold } = chatSettings(ctx.config);
    return runChatStage(ctx, sample, image, questions, prior.constraints!.constraints, { maxInstructions, pifThreshold }, calls);
  },
};
