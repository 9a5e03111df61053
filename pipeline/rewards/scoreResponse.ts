/**
 * A fresh response scored against a ground truth (domain/groundTruth.ts) the way the build verified
 * its answers: rule constraints in process with the build's verifier calls (`ruleVerdict`, the same
 * function the answer stage runs), direct-judged ones by the direct judge (Fig. 22, with the image) in
 * one call per response, compare-judged ones by the compare judge (Fig. 21) against the build's answer
 * made without the constraint, which the ground truth carries (pipeline/judges.ts: the prompts and
 * reply parsing the build's verification uses). Without a judge, judged constraints are not scored (null) and the reward is over
 * the rule constraints. A verdict counts as followed per the ground truth's `vacuous` policy.
 */
import { credited, creditedRate } from '../../domain/verdict.js';
import type { GroundTruth } from '../../domain/groundTruth.js';
import { compareJudgeVerdict, directJudgeScores, type AskJudge } from '../judges.js';
import { ruleVerdict } from '../stages/answer/verifyAnswer.js';
import type { SampleImage } from '../run/sampleImage.js';

export const REWARD_MODES = ['fraction', 'all', 'vector'] as const;
export type RewardMode = (typeof REWARD_MODES)[number];

interface ConstraintScore {
  index: number;
  type: string;
  method: GroundTruth['constraints'][number]['method'];
  /** Credited under the ground truth's vacuous policy; null: not scored (a judged constraint, no judge). */
  followed: boolean | null;
  /** Rule constraints: the response holds nothing the constraint speaks of. */
  vacuous?: boolean;
  detail: string;
}

interface ResponseScore {
  reward: number | Array<number | null>;
  constraints: ConstraintScore[];
}

/** The judge of judged constraints: how to ask it, and the image a ground truth names. */
export interface RewardJudge {
  ask: AskJudge;
  image: (path: string) => Promise<SampleImage>;
}

export async function scoreResponse(truth: GroundTruth, response: string, mode: RewardMode, judge: RewardJudge | undefined): Promise<ResponseScore> {
  const judged = judge ? await judgedVerdicts(truth, response, judge) : undefined;
  const constraints = truth.constraints.map((c, index): ConstraintScore => {
    if (c.method === 'rule') {
      const v = ruleVerdict(index, c, response);
      return { index, type: c.type, method: c.method, followed: credited(v, truth.vacuous), vacuous: v.vacuous ?? false, detail: v.detail };
    }
    const verdict = judged?.get(index);
    if (!verdict) return { index, type: c.type, method: c.method, followed: null, detail: 'not scored: no judge (--no-judge)' };
    return { index, type: c.type, method: c.method, ...verdict };
  });
  return { reward: rewardOf(constraints, mode), constraints };
}

/**
 * The judged constraints' verdicts by index, asked as the build's verification asks them: one direct
 * judge call for the direct-judged ones (with the image), one compare judge call per compare-judged
 * one against the build's answer without it (no image, as the build sends it).
 */
async function judgedVerdicts(truth: GroundTruth, response: string, judge: RewardJudge): Promise<Map<number, { followed: boolean; detail: string }>> {
  const direct = truth.constraints.flatMap((c, index) => (c.method === 'direct_judge' ? [index] : []));
  const compare = truth.constraints.flatMap((c, index) => (c.method === 'compare_judge' ? [{ index, text: c.text, without: c.without }] : []));
  const [scores, verdicts] = await Promise.all([
    // The image loads beside the compare calls, which send none.
    direct.length > 0
      ? judge.image(truth.image).then((image) =>
          directJudgeScores(
            judge.ask,
            response,
            direct.map((i) => truth.constraints[i]!.text),
            image,
          ),
        )
      : [],
    Promise.all(compare.map((c) => compareJudgeVerdict(judge.ask, c.text, response, c.without))),
  ]);
  return new Map([
    ...direct.map((index, i) => {
      const score = scores[i];
      return [
        index,
        { followed: score === true, detail: score === undefined ? 'direct judge: unparsed, counted as not followed' : `direct judge: score ${score ? 1 : 0}/1` },
      ] as const;
    }),
    ...compare.map(({ index }, i) => {
      const verdict = verdicts[i];
      return [
        index,
        { followed: verdict === true, detail: verdict === undefined ? 'compare judge: unparsed, counted as not followed' : `compare judge: judged ${verdict}` },
      ] as const;
    }),
  ]);
}

/** fraction: share of scored constraints followed (1 with none scored); all: 1 only when every scored one is; vector: 1/0/null per constraint. */
function rewardOf(constraints: readonly ConstraintScore[], mode: RewardMode): ResponseScore['reward'] {
  if (mode === 'vector') return constraints.map((c) => (c.followed === null ? null : c.followed ? 1 : 0));
  const scored = constraints.filter((c) => c.followed !== null).map((c) => ({ passed: c.followed === true }));
  const rate = creditedRate(scored, 'pass');
  return mode === 'all' ? (rate === 1 ? 1 : 0) : rate;
}
