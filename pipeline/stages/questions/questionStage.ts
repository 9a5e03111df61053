/**
 * The instruction stage of a multiturn build: the chat's `chat.turns` questions about the image
 * (prompts/chatQuestionsPrompt.ts), distinct and in the model's order. The constraint stage that
 * follows is given `chatTask(questions)` as the task its constraints must fit, since a global
 * instruction binds every answer of the chat.
 */
import { chatSettings } from '../../../config/generationConfig.js';
import { endpointFor } from '../../../config/endpointRouting.js';
import { SampleRejection } from '../../../domain/rejection.js';
import type { SourceSample } from '../../../domain/sample.js';
import type { CallRecord } from '../../../llm/callRecord.js';
import { chatQuestionsReplySchema, renderChatQuestionsPrompt } from '../../../prompts/chatQuestionsPrompt.js';
import type { StageContext } from '../../run/context.js';
import type { SampleImage } from '../../run/sampleImage.js';
import type { InstructionResult } from '../../run/stageState.js';

export async function runQuestionStage(ctx: StageContext, sample: SourceSample, image: SampleImage, calls: CallRecord[]): Promise<InstructionResult> {
  const { turns } = chatSettings(ctx.config);
  const request = { stage: 'instruction' as const, endpoint: endpointFor(ctx.config, 'instruction'), prompt: renderChatQuestionsPrompt(turns, sample.grounding), image };
  const reply = await ctx.models.json(request, 'chat_questions', chatQuestionsReplySchema, calls);
  const questions = distinctQuestions(reply.questions).slice(0, turns);
  if (questions.length < turns) {
    throw new SampleRejection(`instruction: too-few-questions: the model returned ${questions.length} distinct questions, the chat needs ${turns} (chat.turns)`);
  }
  return { instruction: chatTask(questions), origin: 'generated', candidates: reply.questions, examples: [], questions };
}

/** Non-empty questions, each once (compared case- and space-insensitively), in the model's order. */
export function distinctQuestions(proposed: readonly string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of proposed) {
    const question = raw.trim();
    const key = question.toLowerCase().replace(/\s+/g, ' ');
    if (!question || seen.has(key)) continue;
    seen.add(key);
    out.push(question);
  }
  return out;
}

/** The task a chat's constraints must fit: every question of the chat, answered one per turn. */
export function chatTask(questions: readonly string[]): string {
  return `Answer these questions about the image, one per turn of a conversation:\n${questions.map((q, i) => `${i + 1}. ${q}`).join('\n')}`;
}
