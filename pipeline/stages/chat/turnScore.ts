/**
 * Scores one answer of a multi-turn chat against every instruction in force at its turn (all rule-
 * checked: both the build's chat plan and `mmif eval --chats`'s give only such instructions), and
 * decides whether a turn-level DPO pair is kept. Verdict indices are positions in the in-force list, so
 * a pair's chosen and rejected verdicts line up.
 */
import type { VerifierCall } from '../../../domain/constraints/compatibility.js';
import type { ChatCandidate, ChatInstruction } from '../../../domain/multiturn/chatPlan.js';
import { pif } from '../../../domain/multiturn/pif.js';
import { judgePair } from '../rejected/pairRules.js';
import { credited, type VacuousPolicy } from '../../../domain/verdict.js';
import type { PairJudgement } from '../../run/stageState.js';
import type { Verdict } from '../../../domain/verdict.js';
import { ruleVerdict } from '../answer/verifyAnswer.js';

/** An instruction verified by code: its calls are always present. */
export type RuleCheckedInstruction = ChatCandidate & { verifiers: VerifierCall[] };

export interface TurnScore {
  verdicts: Verdict[];
  /** Seed 002's PIF: share of the instructions in force that the answer follows (1 before any, Fig. 5); a vacuous pass follows one only under the `pass` policy. */
  pif: number;
}

export function scoreTurn(answer: string, inForce: ReadonlyArray<ChatInstruction<RuleCheckedInstruction>>, policy: VacuousPolicy): TurnScore {
  const verdicts = inForce.map((instruction, index) => ruleVerdict(index, instruction.constraint, answer));
  return { verdicts, pif: pif(verdicts.map((v) => credited(v, policy))) };
}

/**
 * A turn-level pair: the rejected answer was generated with the instruction at `forgotten` (its index
 * in the in-force list) removed from the context (the retrieval failure seed 002 measures). The
 * single-turn rules apply with that instruction at stake: the rejected answer must really fail it, and
 * the chosen answer must lose on none.
 */
export function judgeTurnPair(chosen: TurnScore, rejected: TurnScore, forgotten: number, policy: VacuousPolicy): PairJudgement {
  return judgePair(chosen.verdicts, rejected.verdicts, [forgotten], policy);
}
