/**
 * The chat step of a multiturn build: every answer of the chat, each turn scored against the
 * instructions in force and regenerated below its PIF threshold, with its turn-level DPO pairs
 * (pipeline/stages/chat/chatStage.ts).
 */
import { chatSettings } from '../../../config/buildConfig.js';
import { MULTITURN_CHAT_VERSION } from '../../../prompts/multiturnChat.js';
import { runChatStage } from './chatStage.js';
import { priorImage, type StageDefinition } from '../stageDefinition.js';

export const chatStep: StageDefinition<'chat'> = {
  name: 'chat',
  summary: 'every answer of the chat, scored per turn, with the turn-level pairs',
  buildsOn: ['image', 'instruction', 'constraints'],
  modelRoles: ['answer', 'rejected'],
  prompts: [MULTITURN_CHAT_VERSION],
  async run(ctx, sample, prior, calls) {
    const image = await priorImage(ctx, prior);
    const questions = prior.instruction!.questions;
    if (!questions) throw new Error(`sample ${sample.sampleId}: the chat stage needs the questions of a multiturn instruction stage`);
    const { maxInstructions, pifThreshold } = chatSettings(ctx.config);
    return runChatStage(ctx, sample, image, questions, prior.constraints!.constraints, { maxInstructions, pifThreshold }, calls);
  },
};
