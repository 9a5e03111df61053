/**
 * A fresh response scored against a ground truth (domain/groundTruth.ts) the way the build verified
 * its answers: rule constraints in process with the build's verifier calls (`ruleVerdict`, the same
 * function the answer stage runs), judged constraints by the direct judge (Fig. 22, with the image;
 * pipeline/judges.ts), all of them in one call per response. A compare-judged constraint is scored by
 * the direct judge too: the compare judge needs an answer generated without the constraint, which a
 * reward service has no answering model for (as builds do with compare judging off); each such
 * verdict says so. Without a judge, judged constraints are not scored (null) and the reward is over
 * the rule constraints. A verdict counts as followed per the ground truth's `vacuous` policy.
 */
import { credited, creditedRate } from '../../domain/verdict.js';
import type { GroundTruth } from '../../domain/groundTruth.js';
import { directJudgeScores, type AskJudge } from '../judges.js';
import { ruleVerdict } from '../stages/answer/verifyAnswer.js';
import type { SampleImage } from '../run/sampleImage.js';

export const REWARD_MODES = ['fraction', 'all', 'vector'] as const;
export type RewardMode = (typeof REWARD_MODES)[number];

export interface ConstraintScore {
  index: number;
  type: string;
  method: GroundTruth['constraints'][number]['method'];
  /** Credited under the ground truth's vacuous policy; null: not scored (a judged constraint, no judge). */
  followed: boolean | null;
  /** Rule constraints: the response holds nothing the constraint speaks of. */
  vacuous?: boolean;
  detail: string;
}

export interface ResponseScore {
  reward: number | Array<number | null>;
  constraints: ConstraintScore[];
}

/** The judge of judged constraints: how to ask it, and the image a ground truth names. */
export interface RewardJudge {
  ask: AskJudge;
  image: (path: string) => Promise<SampleImage>;
}

export async function scoreResponse(truth: GroundTruth, response: string, mode: RewardMode, judge: RewardJudge | undefined): Promise<ResponseScore> {
  const judged = truth.constraints.flatMap((c, index) => (c.method === 'rule' ? [] : [index]));
  const scores =
    judge && judged.length > 0
      ? await directJudgeScores(
          judge.ask,
          response,
          judged.map((i) => truth.constraints[i]!.text),
          await judge.image(truth.image),
        )
      : undefined;
  const constraints = truth.constraints.map((c, index): ConstraintScore => {
    if (c.method === 'rule') {
      const v = ruleVerdict(index, c, response);
      return { index, type: c.type, method: c.method, followed: credited(v, truth.vacuous), vacuous: v.vacuous ?? false, detail: v.detail };
    }
    if (!scores) return { index, type: c.type, method: c.method, followed: null, detail: 'not scored: no judge (--no-judge)' };
    const score = scores[judged.indexOf(index)];
    const how = c.method === 'compare_judge' ? 'direct judge (no answering model to compare with)' : 'direct judge';
    return {
      index,
      type: c.type,
      method: c.method,
      followed: score === true,
      detail: score === undefined ? `${how}: unparsed, counted as not followed` : `${how}: score ${score ? 1 : 0}/1`,
    };
  });
  return { reward: rewardOf(constraints, mode), constraints };
}

/** fraction: share of scored constraints followed (1 with none scored); all: 1 only when every scored one is; vector: 1/0/null per constraint. */
function rewardOf(constraints: readonly ConstraintScore[], mode: RewardMode): ResponseScore['reward'] {
  if (mode === 'vector') return constraints.map((c) => (c.followed === null ? null : c.followed ? 1 : 0));
  const scored = constraints.filter((c) => c.followed !== null).map((c) => ({ passed: c.followed === true }));
  const rate = creditedRate(scored, 'pass');
  return mode === 'all' ? (rate === 1 ? 1 : 0) : rate;
}
