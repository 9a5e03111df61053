/**
 * The context a model answers at one turn of a multi-turn chat (MMMT-IF, seed 002): a standing rule
 * saying that instructions persist (the image message's preface, prompts/chat.ts), the image with the first question, each earlier question with the answer it got, and the current question. A global
 * instruction is written in the user message of the turn that adds it, before that turn's question, and
 * is never repeated: finding it again later in the context is part of the task.
 *
 * Two variants share the layout:
 * - `forget`: the context of a rejected answer, with one earlier instruction removed where it was given
 *   (the retrieval failure the turn-level pairs teach against);
 * - `appendAll`: seed 002's ablation, every instruction given so far appended after the current question.
 */
import type { Constraint } from '../domain/constraints/selection.js';
import { rendered, framed, type RenderedPrompt, type PromptMessage } from './chat.js';

/** Opens every chat (the simulator leaves it out of the turns it reads: simulator/answers.ts). */
export const MULTITURN_SYSTEM_TEXT = 'You are answering questions about an image over several turns. An instruction given in any turn applies to every later answer as well.';

/** Heads the instructions `appendAll` lists after the current question (the simulator finds them by it). */
export const APPEND_ALL_HEADING = 'Follow all of these instructions in your answer:';

export interface ChatTurn {
  question: string;
  /** The instruction added at this turn, if any. */
  instruction?: Constraint;
  /** The answer kept for this turn; absent for the turn being answered. */
  answer?: string;
}

export interface ChatContextOptions {
  /** 0-based index of the earlier turn whose instruction is left out. */
  forget?: number;
  appendAll?: boolean;
}

/** The messages to answer turn `current` (0-based); earlier turns must carry their kept answer. */
export function renderChatTurn(turns: readonly ChatTurn[], current: number, options: ChatContextOptions = {}): RenderedPrompt {
  if (current < 0 || current >= turns.length) throw new Error(`chat context: turn ${current + 1} is outside a ${turns.length}-turn chat`);
  if (options.forget !== undefined && !(options.forget < current && turns[options.forget]?.instruction)) {
    throw new Error(`chat context: turn ${options.forget + 1} adds no instruction before turn ${current + 1}, nothing to forget`);
  }
  const messages: PromptMessage[] = [];
  for (let i = 0; i <= current; i++) {
    const turn = turns[i]!;
    const instruction = i === options.forget ? undefined : turn.instruction;
    let text = instruction ? `${instruction.value}\n\n${turn.question}` : turn.question;
    if (i === current && options.appendAll) {
      const given = turns.slice(0, current + 1).flatMap((t, j) => (t.instruction && j !== options.forget ? [t.instruction.value] : []));
      if (given.length > 0) text += `\n\n${APPEND_ALL_HEADING}\n${given.map((v, n) => `${n + 1}. ${v}`).join('\n')}`;
    }
    messages.push({ role: 'user', text, ...(i === 0 ? { withImage: true } : {}) });
    if (i < current) {
      if (turn.answer === undefined) throw new Error(`chat context: turn ${i + 1} has no answer, so turn ${current + 1} cannot be asked yet`);
      messages.push({ role: 'assistant', text: turn.answer });
    }
  }
  return rendered('chat_answer', framed(MULTITURN_SYSTEM_TEXT, messages[0]!, messages.slice(1)), options.appendAll ? '+append-all' : '');
}
