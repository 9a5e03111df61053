/**
 * Turns a multiturn sample's stage states into output records (seed 002 chats): one chat record (SFT)
 * with every turn's question, the instruction it adds, the answer, the verdicts on every instruction
 * in force and the turn's PIF; one turn-level pair per turn whose rejected answer (made with an earlier
 * instruction left out of its context) passed the pair rules; and a rejection for the sample or for
 * each discarded pair, naming the turn and the instructions, with what the sample passed. Pure: no I/O.
 */
import type { ModelRole } from '../../config/modelsConfig.js';
import type { SourceSample } from '../../domain/sample.js';
import { pif } from '../../domain/multiturn/pif.js';
import { MULTITURN_STAGE_NAMES } from '../../config/stages.js';
import { MULTITURN_SYSTEM_TEXT } from '../../prompts/multiturnChat.js';
import { passedStages, rejectRecord, writtenCalls, writtenDetails, writtenVerdict, sourceFields } from './records.js';
import { IMAGE_TOKEN, type AssembledChat, type ChatPairRecord, type ChatRecord, type ChatTurnRecord, type RejectRecord, type SampleStates } from '../contracts/records.js';

export function assembleChat(sample: SourceSample, states: SampleStates): AssembledChat {
  const calls = MULTITURN_STAGE_NAMES.flatMap((s) => states[s]?.calls ?? []);
  const passed = passedStages(states);
  for (const stage of MULTITURN_STAGE_NAMES) {
    const state = states[stage];
    if (!state) return { pairs: [], calls, rejects: [rejectRecord(sample, passed, 'sample', stage, `incomplete: stage '${stage}' never ran`)] };
    if (state.status === 'rejected') return { pairs: [], calls, rejects: [rejectRecord(sample, passed, 'sample', stage, state.reason, writtenDetails(state.details))] };
  }
  const image = states.image!.status === 'ok' ? states.image!.result : undefined;
  const result = states.chat!.status === 'ok' ? states.chat!.result : undefined;
  if (!image || !result) throw new Error(`sample ${sample.sampleId}: unreachable, every stage is ok`);
  const modelOf = (role: ModelRole) => calls.find((c) => c.stage === role)?.model ?? '';
  const turns: ChatTurnRecord[] = result.turns.map((t) => ({
    turn: t.turn,
    question: t.question,
    instruction: t.instruction ?? null,
    answer: t.answer,
    attempts: t.attempts,
    verdicts: t.verdicts.map(writtenVerdict),
    pif: t.pif,
  }));
  const placeholder = turns.find((t) => [t.question, t.instruction ?? '', t.answer].some((text) => text.includes(IMAGE_TOKEN)));
  if (placeholder) {
    return {
      pairs: [],
      calls,
      rejects: [
        rejectRecord(sample, passed, 'sample', 'chat', `image-token-in-text: turn ${placeholder.turn} contains the literal ${IMAGE_TOKEN}, which trainers read as an image slot`),
      ],
    };
  }
  const simulated = calls.some((c) => c.simulated);
  const shared = { ...sourceFields(sample, image), system: MULTITURN_SYSTEM_TEXT };
  const chat: ChatRecord = {
    id: sample.sampleId,
    ...shared,
    instructions: result.instructions.map(({ turn, constraint }) => ({ turn, type: constraint.type, value: constraint.value, verifiers: writtenCalls(constraint.verifiers) })),
    removed_instructions: result.removed,
    turns,
    models: {
      instruction: modelOf('instruction'),
      constraints: modelOf('constraints'),
      compatibility: modelOf('compatibility'),
      verifier: modelOf('verifier'),
      answer: modelOf('answer'),
      rejected: modelOf('rejected'),
    },
    simulated,
    image_richness: sample.richness ?? null,
  };
  const pairs: ChatPairRecord[] = [];
  const rejects: RejectRecord[] = [];
  for (const t of result.turns) {
    if (!t.pair) continue;
    const forgotten = result.instructions.find((x) => x.turn === t.pair!.forgottenTurn)!;
    const inForce = result.instructions.filter((x) => x.turn <= t.turn);
    const stake = inForce.indexOf(forgotten);
    const judgement = t.pair.judgement;
    if (!judgement.kept) {
      rejects.push(
        rejectRecord(
          sample,
          passed,
          'pair',
          'chat',
          `chat: ${judgement.rule}: turn ${t.turn}, answer made without turn ${forgotten.turn}'s instruction #${stake + 1} ${forgotten.constraint.type} ("${forgotten.constraint.value}"): ${judgement.detail}`,
          {
            verdicts: t.pair.rejectedVerdicts.map(writtenVerdict),
            at_stake: [stake],
          },
        ),
      );
      continue;
    }
    if (t.pair.rejected.includes(IMAGE_TOKEN)) {
      rejects.push(
        rejectRecord(
          sample,
          passed,
          'pair',
          'chat',
          `image-token-in-text: turn ${t.turn}'s rejected answer contains the literal ${IMAGE_TOKEN}, which trainers read as an image slot`,
        ),
      );
      continue;
    }
    pairs.push({
      id: `${sample.sampleId}-t${t.turn}-dpo`,
      chat_id: sample.sampleId,
      ...shared,
      turn: t.turn,
      history: turns.slice(0, t.turn - 1).map(({ question, instruction, answer }) => ({ question, instruction, answer })),
      question: t.question,
      instruction: t.instruction ?? null,
      chosen: t.answer,
      rejected: t.pair.rejected,
      forgotten_turn: forgotten.turn,
      forgotten_instruction: { type: forgotten.constraint.type, value: forgotten.constraint.value },
      chosen_verdicts: t.verdicts.map(writtenVerdict),
      rejected_verdicts: t.pair.rejectedVerdicts.map(writtenVerdict),
      chosen_pif: t.pif,
      rejected_pif: t.pair.rejectedPif ?? pif(t.pair.rejectedVerdicts.map((v) => v.passed)),
      simulated,
    });
  }
  return { chat, pairs, rejects, calls };
}
