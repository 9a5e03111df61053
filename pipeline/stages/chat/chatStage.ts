/**
 * Generates one multi-turn chat over an image (MMMT-IF, seed 002): each question is answered with the
 * chat so far, the answer is verified against every instruction in force (rule functions only), and a
 * turn below the PIF threshold is regenerated (OpenAI seed = regeneration, as the single-turn answer stage
 * does) or the chat is rejected naming the turn. Turns that follow an earlier instruction get a
 * rejected answer generated with that instruction removed from the context; the pair is kept only
 * under the single-turn pair rules (pipeline/stages/rejected/pairRules.ts).
 *
 * Every model call goes through ctx.models (cached per request), so a re-run pays nothing again.
 */
import { endpointFor } from '../../../config/endpointRouting.js';
import { assignInstructions, droppedForRejected, instructionsInForce, instructionTurns, type ChatInstruction } from '../../../domain/multiturn/chatPlan.js';
import { SampleRejection } from '../../../domain/rejection.js';
import { credited } from '../../../domain/verdict.js';
import type { SourceSample } from '../../../domain/sample.js';
import type { CallRecord } from '../../../llm/callRecord.js';
import { renderChatTurn, type ChatContextOptions, type ChatTurn } from '../../../prompts/multiturnChat.js';
import { shuffled } from '../../../domain/random.js';
import { throwIfAborted } from '../../../llm/abortScope.js';
import { sampleRng, type StageContext } from '../../run/context.js';
import type { SampleImage } from '../../run/sampleImage.js';
import type { ChatResult, ChatTurnResult, PlannedConstraint, TurnPair } from '../../run/stageState.js';
import { judgeTurnPair, scoreTurn, type TurnScore } from './turnScore.js';

interface ChatSettings {
  /** Instructions per chat at most (1..6); the count and the turns are seeded per sample. */
  maxInstructions: number;
  /** A turn is kept when its PIF reaches this (1 for SFT data: every instruction followed). */
  pifThreshold: number;
}

export async function runChatStage(
  ctx: StageContext,
  sample: SourceSample,
  image: SampleImage,
  questions: readonly string[],
  candidates: readonly PlannedConstraint[],
  settings: ChatSettings,
  calls: CallRecord[],
): Promise<ChatResult> {
  const at = instructionTurns(sampleRng(ctx, sample.sampleId, 'chat-instruction-turns'), questions.length, settings.maxInstructions);
  // Seed 002 §1: each instruction is "uniformly at random chosen from a category not yet added".
  const plan = assignInstructions(at, shuffled(sampleRng(ctx, sample.sampleId, 'chat-instruction-order'), candidates));
  if (plan.instructions.length === 0) {
    throw new SampleRejection(`chat: no-instructions: none of ${candidates.length} candidate constraints is rule-checked and compatible`);
  }
  const chat: ChatTurn[] = questions.map((question, i) => ({ question, instruction: plan.instructions.find((x) => x.turn === i + 1)?.constraint }));
  const turns: ChatTurnResult[] = [];
  for (let i = 0; i < questions.length; i++) {
    throwIfAborted(); // a cancelled activity asks no further turn
    const turn = i + 1;
    const inForce = instructionsInForce(plan.instructions, turn);
    const chosen = await answerTurn(ctx, chat, i, inForce, settings.pifThreshold, image, calls);
    chat[i]!.answer = chosen.answer;
    const forgotten = droppedForRejected(sampleRng(ctx, sample.sampleId, `chat-forget-${turn}`), plan.instructions, turn);
    turns.push({
      turn,
      question: questions[i]!,
      ...(chat[i]!.instruction ? { instruction: chat[i]!.instruction!.value } : {}),
      answer: chosen.answer,
      attempts: chosen.attempts,
      verdicts: chosen.score.verdicts,
      pif: chosen.score.pif,
      ...(forgotten ? { pair: await rejectedTurn(ctx, chat, i, inForce, forgotten, chosen.score, image, calls) } : {}),
    });
  }
  return {
    instructions: plan.instructions.map((x) => ({ turn: x.turn, constraint: x.constraint })),
    removed: plan.removed.map((r) => ({ type: r.constraint.type, value: r.constraint.value, reason: r.reason })),
    turns,
  };
}

function turnRequest(
  ctx: StageContext,
  stage: 'answer' | 'rejected',
  chat: readonly ChatTurn[],
  index: number,
  image: SampleImage,
  regeneration: number,
  options: ChatContextOptions = {},
) {
  return {
    stage,
    endpoint: endpointFor(ctx.config, stage),
    prompt: renderChatTurn(chat, index, options),
    image,
    seed: regeneration === 0 ? undefined : regeneration,
  };
}

async function answerTurn(
  ctx: StageContext,
  chat: readonly ChatTurn[],
  index: number,
  inForce: ReadonlyArray<ChatInstruction<PlannedConstraint>>,
  threshold: number,
  image: SampleImage,
  calls: CallRecord[],
): Promise<{ answer: string; attempts: number; score: TurnScore }> {
  const { maxRegenerations, vacuous } = ctx.config.verification;
  let score: TurnScore = { verdicts: [], pif: 1 };
  for (let regeneration = 0; regeneration <= maxRegenerations; regeneration++) {
    const answer = await ctx.models.text(turnRequest(ctx, 'answer', chat, index, image, regeneration), calls);
    score = scoreTurn(answer, inForce, vacuous);
    if (score.pif >= threshold) return { answer, attempts: regeneration + 1, score };
  }
  const failed = score.verdicts
    .filter((v) => !credited(v, vacuous))
    .map((v) => `#${v.index + 1} ${v.type} (${v.passed ? 'vacuous pass: ' : ''}${v.detail})`)
    .join('; ');
  throw new SampleRejection(`chat: below-threshold: turn ${index + 1} PIF ${score.pif.toFixed(2)} < ${threshold} after ${maxRegenerations + 1} answers; failed: ${failed}`, {
    verdicts: score.verdicts,
  });
}

/** The rejected answer of a turn, regenerated like the single-turn one until the pair rules keep it. */
async function rejectedTurn(
  ctx: StageContext,
  chat: readonly ChatTurn[],
  index: number,
  inForce: ReadonlyArray<ChatInstruction<PlannedConstraint>>,
  forgotten: ChatInstruction<PlannedConstraint>,
  chosen: TurnScore,
  image: SampleImage,
  calls: CallRecord[],
): Promise<TurnPair> {
  const atStake = inForce.indexOf(forgotten);
  let pair: TurnPair | undefined;
  for (let regeneration = 0; regeneration <= ctx.config.verification.maxRegenerations; regeneration++) {
    const rejected = await ctx.models.text(turnRequest(ctx, 'rejected', chat, index, image, regeneration, { forget: forgotten.turn - 1 }), calls);
    const policy = ctx.config.verification.vacuous;
    const score = scoreTurn(rejected, inForce, policy);
    pair = { forgottenTurn: forgotten.turn, rejected, rejectedVerdicts: score.verdicts, rejectedPif: score.pif, judgement: judgeTurnPair(chosen, score, atStake, policy) };
    if (pair.judgement.kept) break;
  }
  return pair!;
}
