/**
 * When a DPO pair is worth keeping: the rules (PAIR_RULES, in the stage-state contract) a (chosen,
 * rejected) pair must pass, as pure logic over the two answers' verdicts, checked in that order (a
 * pair refused by both counts under the first). A pair teaches "prefer the chosen answer" on every
 * constraint of the prompt, so it must not contradict itself on any of them. Vacuous passes
 * (domain/verdict.ts) count for neither side under `verification.vacuous: "fail"`: a rejected answer
 * that dodged a constraint at stake did not fail it, and a chosen answer that dodged one loses to a
 * rejected answer that passed there (either way the pair would reward dodging); under `"pass"` both
 * are the reference's passes.
 */
import { credited, type VacuousPolicy } from '../../../domain/verdict.js';
import type { PairJudgement } from '../../run/stageState.js';
import type { Verdict } from '../../../domain/verdict.js';

export function judgePair(chosen: readonly Verdict[], rejected: readonly Verdict[], atStake: readonly number[], policy: VacuousPolicy): PairJudgement {
  const stake = new Set(atStake);
  if (!rejected.some((v) => stake.has(v.index) && !v.passed)) {
    return { kept: false, rule: 'uninformative-pair', detail: 'the rejected answer satisfied every constraint at stake' };
  }
  const losses = chosenLosses(chosen, rejected, policy);
  if (losses.length > 0) {
    const list = losses.map((l) => `#${l.index + 1} ${l.type} (chosen ${l.method}: ${l.detail})`).join('; ');
    return { kept: false, rule: 'chosen-loses', detail: `the chosen answer fails where the rejected one passes: ${list}` };
  }
  return { kept: true };
}

/**
 * The chosen answer's verdicts not credited on constraints the rejected answer passed by the same
 * method. Verdicts of different methods are not compared: the chosen answer's compare-judge verdict
 * (against an answer made without the constraint) and the rejected answer's direct-judge verdict (the
 * rejected answer is itself the one made without it) answer different questions.
 */
export function chosenLosses(chosen: readonly Verdict[], rejected: readonly Verdict[], policy: VacuousPolicy): Verdict[] {
  const rejectedPassed = new Map(rejected.filter((v) => v.passed).map((v) => [v.index, v.method]));
  return chosen.filter((v) => !credited(v, policy) && rejectedPassed.get(v.index) === v.method);
}

/** Which constraints the rejected answer is verified on: those at stake, plus every rule-checked one (free to check). */
export function rejectedVerificationIndices(methods: ReadonlyArray<{ method: string }>, atStake: readonly number[]): number[] {
  const stake = new Set(atStake);
  return methods.flatMap((c, i) => (stake.has(i) || c.method === 'rule' ? [i] : []));
}
