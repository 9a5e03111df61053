/**
 * Verifies one chat answer against every global instruction given so far (by code only: the chat
 * planner gives rule-checkable instructions), gives its PIF, and judges a turn-level preference pair.
 */
import type { Verdict } from '../../domain/verdict.js';
import { pif } from '../../domain/multiturn/pif.js';
import { runVerifierCall } from '../../verification/functions.js';
import { judgePair, type PairJudgement } from '../pairRules.js';
import type { GlobalInstruction } from './chatPlan.js';

export interface TurnVerification {
  verdicts: Verdict[];
  /** Undefined when no instruction has been given yet (PIF is 0/0). */
  pif: number | null;
}

/** Verdict `index` is the instruction's position in the chat's instruction list. */
export function verifyTurn(answer: string, given: readonly GlobalInstruction[]): TurnVerification {
  const verdicts = given.map((instruction, index): Verdict => {
    const failures: string[] = [];
    for (const call of instruction.verifiers ?? []) {
      const outcome = runVerifierCall(answer, call);
      if ('error' in outcome) throw new Error(`instruction #${index + 1} (${instruction.type}, turn ${instruction.turn}): ${outcome.error}`);
      if (!outcome.passed) failures.push(call.func);
    }
    return {
      index,
      type: instruction.type,
      method: 'rule',
      passed: failures.length === 0,
      calls: instruction.verifiers,
      detail: failures.length === 0 ? 'all calls passed' : `failed ${failures.join(', ')}`,
    };
  });
  return { verdicts, pif: pif(verdicts.map((v) => v.passed)) };
}

/**
 * The turn-level pair rule: the rejected answer was generated with instruction `removed` left out
 * of the context (the retrieval failure seed 002 measures). Both answers are verified on every
 * instruction given so far; the single-turn rule then keeps the pair only when the rejected answer
 * fails the removed instruction and the chosen answer loses on none.
 */
export function judgeTurnPair(chosen: TurnVerification, rejected: TurnVerification, removed: number): PairJudgement {
  return judgePair(chosen.verdicts, rejected.verdicts, [removed]);
}
