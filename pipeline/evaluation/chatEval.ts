/**
 * One chat of a multi-turn evaluation (seed 002). The chat gets planEvalChat's seeded global
 * instructions; turn t is asked with the builds' chat layout (prompts/multiturnChat.ts: the image
 * with the first question, each instruction in the user turn that adds it, every earlier answer kept),
 * N responses per turn (`seed` 0..N-1), each verified against every instruction given so far
 * (turnScore.ts, shared with the chat stage); the chat continues with the first response. With
 * `appendInstructions` (the paper's ablation) every instruction so far is also listed after the question.
 */
import { instructionsInForce } from '../../domain/multiturn/chatPlan.js';
import { credited, type VacuousPolicy, type Verdict } from '../../domain/verdict.js';
import type { CallRecord } from '../../llm/callRecord.js';
import { renderChatTurn, type ChatTurn } from '../../prompts/multiturnChat.js';
import { planEvalChat } from '../stages/chat/globalInstructions.js';
import { scoreTurn } from '../stages/chat/turnScore.js';
import type { SampleImage } from '../run/sampleImage.js';
import type { EvalContext } from './evalContext.js';
import type { ChatInput } from './evalItems.js';

export interface EvalTurnResult {
  /** 1-based. */
  turn: number;
  question: string;
  /** Every instruction in force at this turn, in the order given. */
  instructions: string[];
  responses: string[];
  /**
   * Per response: its rule verdict on each instruction in force, as build records carry them (`passed`
   * as the reference gives it, `vacuous`, the verifier `calls`, `detail`); whether it counts as
   * followed is the eval's `vacuous` policy (turnsFollowed).
   */
  verdicts: Verdict[][];
  /** Per response: its PIF (null before any instruction). */
  pif: Array<number | null>;
}

export async function evaluateChat(ctx: EvalContext, chat: ChatInput, image: SampleImage, calls: CallRecord[]): Promise<EvalTurnResult[]> {
  const options = ctx.config.chats!;
  const plan = planEvalChat(chat.id, { seed: options.seed, turns: chat.questions.length, maxInstructions: options.maxInstructions });
  const turns: ChatTurn[] = chat.questions.map((question, i) => {
    const instruction = plan.instructions.find((g) => g.turn === i + 1)?.constraint;
    return instruction ? { question, instruction } : { question };
  });
  const results: EvalTurnResult[] = [];
  for (const [i, turn] of turns.entries()) {
    const inForce = instructionsInForce(plan.instructions, i + 1);
    const prompt = renderChatTurn(turns, i, { appendAll: options.appendInstructions });
    const responses: string[] = [];
    for (let seed = 0; seed < ctx.config.responses; seed++) {
      responses.push(await ctx.models.text({ stage: 'answer', endpoint: ctx.config.model, prompt, image, seed }, calls));
    }
    const scored = responses.map((r) => scoreTurn(r, inForce, ctx.config.vacuous));
    results.push({
      turn: i + 1,
      question: turn.question,
      instructions: inForce.map((g) => g.constraint.value),
      responses,
      verdicts: scored.map((s) => s.verdicts),
      pif: scored.map((s) => s.pif),
    });
    turn.answer = responses[0]!;
  }
  return results;
}

/** Per response of a turn: whether it follows each instruction in force, under the eval's `vacuous` policy. */
export function turnsFollowed(turn: Pick<EvalTurnResult, 'verdicts'>, policy: VacuousPolicy): boolean[][] {
  return turn.verdicts.map((response) => response.map((v) => credited(v, policy)));
}
