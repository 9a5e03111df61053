/**
 * The questions of a multi-turn chat (MMMT-IF, seed 002): T independent questions about one image,
 * each answerable from what the image shows, as MMDU's question turns are (seed 002 §1 builds on
 * MMDU's "multi-turn chat task with independent question turns"). The instruction stage of a
 * multiturn build asks for them; the global instructions are added later, by the chat plan.
 */
import { z } from 'zod';
import { rendered, type RenderedPrompt } from './chat.js';

export const chatQuestionsReplySchema = z.object({
  questions: z.array(z.string().min(1)).min(1),
});

/** The simulator recognises the prompt by this opening (simulator/replies.ts). */
const CHAT_QUESTIONS_OPENING = 'You are an expert in writing questions about images for multi-turn conversations.';

/** Precedes the number of questions asked for (the simulator reads the count after it). */
export const CHAT_QUESTIONS_LABELS = { count: 'Write exactly' } as const;

export function renderChatQuestionsPrompt(count: number, grounding?: string): RenderedPrompt {
  const text = `${CHAT_QUESTIONS_OPENING}

## Task
${CHAT_QUESTIONS_LABELS.count} ${count} different questions a user could ask about this image in one conversation, one question per turn.
- Every question must be answerable from what the image shows; do not ask about things that are not visible.
- Make the questions diverse: cover different objects, regions, attributes, relations, actions, text and the overall scene, not the same detail twice.
- Each question stands on its own: it must not depend on the answer to another question.
- Ask open questions that call for an answer of a few sentences, not yes/no questions.

Your output format should be:
{"questions": ["<question 1>", "<question 2>", "..."]}${grounding ? `\n\n## Text visible in the image\n${grounding}` : ''}`;
  return rendered('chat_questions', [{ role: 'user', text, withImage: true }]);
}
