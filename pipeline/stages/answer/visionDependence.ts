/**
 * Whether an accepted sample needs its image (`quality.visionDependence`). VC-IFEval (arXiv
 * 2601.03198) shows that MM-IFEval-style prompts can often be passed without looking at the image: it
 * scores answers made with and without the image. Here the answer model answers the same prompt with
 * no image (the first answer's request without the image: when the rejected endpoint is the same model, the
 * `no_image` DPO strategy's first call is this very request, so one of the two is a cache hit), and the
 * direct judge, shown the image, scores that blind answer on the sample's image-grounded constraints
 * (the judged ones: rule functions check form, which needs no image) and on a grounding check against a
 * reference answer (the dataset's own answer, else the accepted one). A blind answer that passes them
 * all means the sample is answered as well without its image: `vision_dependent: false`.
 */
import { directJudgeScores } from '../../judges.js';
import { answerRequest, type Task } from './answerRequest.js';
import type { StageContext } from '../../run/context.js';
import type { SampleImage } from '../../run/sampleImage.js';
import type { AnswerResult, PlannedConstraint, VisionDependence } from '../../run/stageState.js';
import { priorJudgement, priorJudgements } from './priorJudgements.js';
import { judgeOf } from './verifyAnswer.js';
import type { CallRecord } from '../../../llm/callRecord.js';

/** The reason code a vision-independent sample is rejected under (quality.visionDependence.filter). */
export const VISION_INDEPENDENT = 'vision-independent';

/** The grounding check: what a blind answer cannot pass by guessing, judged with the image. */
const groundingCheck = (reference: string): string =>
  `Every statement the answer makes about the image is correct for this image, and it answers the task as well as this reference answer does: "${reference}"`;

export async function checkVisionDependence(
  ctx: StageContext,
  task: Task,
  constraints: readonly PlannedConstraint[],
  chosen: Pick<AnswerResult, 'answer' | 'verdicts'>,
  image: SampleImage,
  calls: CallRecord[],
): Promise<VisionDependence> {
  const blindAnswer = await ctx.models.text(answerRequest(ctx, 'answer', task, constraints, undefined, 0).request, calls);
  // A blind answer that is the chosen answer's very text keeps the chosen answer's direct-judge scores (priorJudgements.ts).
  const priors = priorJudgements(chosen);
  const groundedIndices = constraints.flatMap((c, i) => (c.method === 'rule' ? [] : [i]));
  const asked = groundedIndices.filter((i) => !priorJudgement(priors, blindAnswer, i));
  const checks = [...asked.map((i) => constraints[i]!.value), groundingCheck(task.reference ?? chosen.answer)];
  const scores = await directJudgeScores(judgeOf(ctx, calls), blindAnswer, checks, image);
  const grounded = groundedIndices.map((index) => {
    const prior = priorJudgement(priors, blindAnswer, index);
    return prior ? { index, passed: prior.passed, reusedFrom: prior.from } : { index, passed: scores[asked.indexOf(index)] ?? null };
  });
  const reference = scores[checks.length - 1] ?? null;
  // An unscored check is not a pass: only a blind answer the judge passed on everything is independent.
  const dependent = !(reference === true && grounded.every((g) => g.passed === true));
  return { dependent, blindAnswer, grounded, reference };
}
