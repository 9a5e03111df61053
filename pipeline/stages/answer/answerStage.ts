/**
 * The answer stage: the chosen answer follows every constraint and must pass the post-filter (at
 * least `passThreshold` of its constraints verified), regenerating up to `maxRegenerations` times;
 * optionally checked for vision dependence.
 */
import { endpointFor } from '../../../config/endpointRouting.js';
import { SampleRejection } from '../../../domain/rejection.js';
import type { CallRecord } from '../../../llm/callRecord.js';
import { answerPromptText } from '../../../prompts/answerPrompt.js';
import type { StageContext } from '../../run/context.js';
import type { SampleImage } from '../../run/sampleImage.js';
import type { AnswerResult, PlannedConstraint } from '../../run/stageState.js';
import type { Verdict } from '../../../domain/verdict.js';
import { verifyAnswer, withoutAnswers } from './verifyAnswer.js';
import { callBranches } from '../../run/callBranches.js';
import { checkVisionDependence, VISION_INDEPENDENT } from './visionDependence.js';
import { answerRequest, keptReasoning, type Task } from './answerRequest.js';
import { credited, creditedRate, type VacuousPolicy } from '../../../domain/verdict.js';

/** The verdicts not credited, vacuous passes named as such. */
const failures = (verdicts: readonly Verdict[], policy: VacuousPolicy) =>
  verdicts
    .filter((v) => !credited(v, policy))
    .map((v) => `#${v.index + 1} ${v.type} (${v.method}: ${v.passed ? 'vacuous pass: ' : ''}${v.detail})`)
    .join('; ');

export async function runAnswerStage(ctx: StageContext, task: Task, constraints: readonly PlannedConstraint[], image: SampleImage, calls: CallRecord[]): Promise<AnswerResult> {
  const { passThreshold, maxRegenerations, vacuous } = ctx.config.verification;
  let verdicts: Verdict[] = [];
  let firstVerdicts: Verdict[] = [];
  let withouts: ReadonlyMap<number, string> | undefined;
  for (let regeneration = 0; regeneration <= maxRegenerations; regeneration++) {
    const answering = (branch: CallRecord[]) => ctx.models.textAndReasoning(answerRequest(ctx, 'answer', task, constraints, image, regeneration).request, branch);
    // The compare judge's answers without each constraint do not depend on the answer: made beside the first one.
    const [{ text: answer, reasoning }, made] = await callBranches(calls, [
      answering,
      (branch: CallRecord[]) => (withouts ? Promise.resolve(withouts) : withoutAnswers(ctx, task, constraints, image, branch)),
    ]);
    withouts = made;
    verdicts = await verifyAnswer(ctx, { task, constraints, answer, image, withouts }, calls);
    if (regeneration === 0) firstVerdicts = verdicts;
    const regenerated = regeneration > 0 ? { firstVerdicts } : {};
    const rate = creditedRate(verdicts, vacuous);
    if (rate >= passThreshold) {
      const model = endpointFor(ctx.config, 'answer').model;
      const accepted: AnswerResult = {
        prompt: answerPromptText(task.instruction, constraints),
        answer,
        model,
        verdicts,
        passRate: rate,
        attempts: regeneration + 1,
        ...regenerated,
        ...keptReasoning(ctx, reasoning),
      };
      const vision = ctx.config.quality?.visionDependence;
      if (!vision) return accepted;
      const visionDependence = await checkVisionDependence(ctx, task, constraints, accepted, image, calls);
      if (vision.filter && !visionDependence.dependent) {
        throw new SampleRejection(`answer: ${VISION_INDEPENDENT}: answered as well without the image (quality.visionDependence.filter)`, { verdicts });
      }
      return { ...accepted, visionDependence };
    }
  }
  throw new SampleRejection(
    `answer: below-threshold: pass rate ${creditedRate(verdicts, vacuous).toFixed(2)} < ${passThreshold} after ${maxRegenerations + 1} answers; failed: ${failures(verdicts, vacuous)}`,
    maxRegenerations > 0 ? { verdicts, firstVerdicts } : { verdicts },
  );
}
