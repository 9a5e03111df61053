/**
 * The rejected stage: the DPO pair's rejected answer, generated under a seeded strategy —
 * ceil(n/3), ceil(2n/3) or all constraints dropped, or the image removed — and kept only if it
 * really fails at least one constraint at stake and beats the chosen answer on none (pairRules.ts).
 */
import type { DpoStrategy } from '../../../config/generationConfig.js';
import { endpointFor } from '../../../config/endpointRouting.js';
import { dropConstraints } from '../../../domain/constraints/selection.js';
import { pickOne } from '../../../domain/random.js';
import { SampleRejection } from '../../../domain/rejection.js';
import type { SourceSample } from '../../../domain/sample.js';
import type { CallRecord } from '../../../llm/callRecord.js';
import { answerPromptText } from '../../../prompts/answerPrompt.js';
import { sampleRng, type StageContext } from '../../run/context.js';
import type { SampleImage } from '../../run/sampleImage.js';
import type { StageRequest } from '../../run/stageRequest.js';
import type { AnswerResult, PairJudgement, PairRule, PlannedConstraint, RejectedResult } from '../../run/stageState.js';
import { priorJudgements } from '../answer/priorJudgements.js';
import { judgePair, rejectedVerificationIndices } from './pairRules.js';
import { verifyAnswer } from '../answer/verifyAnswer.js';
import { answerRequest, keptReasoning, type Task } from '../answer/answerRequest.js';
import { creditedRate, type Verdict } from '../../../domain/verdict.js';

const DROP_FRACTION: Record<Exclude<DpoStrategy, 'no_image'>, number> = { drop33: 1 / 3, drop66: 2 / 3, drop100: 1 };

/** The seeded DPO plan of a sample: its strategy and which constraints the rejected answer drops. */
function rejectedPlan(ctx: StageContext, sample: SourceSample, constraints: readonly PlannedConstraint[]) {
  const strategy = pickOne(sampleRng(ctx, sample.sampleId, 'dpo-strategy'), ctx.config.dpo.strategies);
  const { kept, dropped } =
    strategy === 'no_image'
      ? { kept: [...constraints], dropped: [] as PlannedConstraint[] }
      : dropConstraints(sampleRng(ctx, sample.sampleId, 'dpo-drop'), constraints, DROP_FRACTION[strategy]);
  return { strategy, kept, dropped };
}

/** The rejected stage's first model call, as the stage (or the Batch API, ahead of it) sends it. */
export function rejectedRequest(ctx: StageContext, sample: SourceSample, task: Task, constraints: readonly PlannedConstraint[], image: SampleImage): StageRequest {
  const { strategy, kept } = rejectedPlan(ctx, sample, constraints);
  return answerRequest(ctx, 'rejected', task, kept, strategy === 'no_image' ? undefined : image, 0);
}

/**
 * The rejected answer of a DPO pair. Under `dpo.validate: strict` it is verified on the constraints
 * at stake and on every rule-checked constraint (a direct-judge score the answer stage already gave on
 * the same text is reused, never asked again), and the pair must pass pipeline/pairRules.ts; a
 * refused answer is regenerated (OpenAI seed = regeneration), and after the last regeneration the pair is
 * discarded under the rule that refused it. Under `paper` the first answer is kept as generated;
 * its rule verdicts are still recorded (they cost no model call), no judge is asked.
 */
export async function runRejectedStage(
  ctx: StageContext,
  sample: SourceSample,
  task: Task,
  constraints: readonly PlannedConstraint[],
  chosenAnswer: Pick<AnswerResult, 'answer' | 'verdicts' | 'visionDependence'>,
  image: SampleImage,
  calls: CallRecord[],
): Promise<RejectedResult> {
  const chosen = chosenAnswer.verdicts;
  // A rejected answer that is a text the sample's judge already scored (under no_image, the blind answer) keeps those scores.
  const priors = priorJudgements(chosenAnswer);
  const { strategy, kept, dropped } = rejectedPlan(ctx, sample, constraints);
  const validation = ctx.config.dpo.validate;
  // Without the image every constraint is at stake; otherwise only the dropped ones.
  const atStake = constraints.flatMap((c, i) => (strategy === 'no_image' || dropped.includes(c) ? [i] : []));
  const indices = rejectedVerificationIndices(constraints, validation === 'strict' ? atStake : []);
  const maxAnswers = validation === 'strict' ? ctx.config.verification.maxRegenerations + 1 : 1;
  const ruleRejections: Partial<Record<PairRule, number>> = {};
  let verdicts: Verdict[] = [];
  let refusal: Extract<PairJudgement, { kept: false }> | undefined;
  for (let regeneration = 0; regeneration < maxAnswers; regeneration++) {
    const request = answerRequest(ctx, 'rejected', task, kept, strategy === 'no_image' ? undefined : image, regeneration).request;
    const { text: answer, reasoning } = await ctx.models.textAndReasoning(request, calls);
    // `paper` asks no judge about the rejected answer, not even for the judge-vs-rule sample.
    verdicts = await verifyAnswer(ctx, { task, constraints, answer, image, indices, auditJudge: validation === 'strict', priors }, calls);
    const judgement: PairJudgement = validation === 'strict' ? judgePair(chosen, verdicts, atStake, ctx.config.verification.vacuous) : { kept: true };
    if (judgement.kept) {
      const model = endpointFor(ctx.config, 'rejected').model;
      return {
        strategy,
        kept,
        dropped,
        prompt: answerPromptText(task.instruction, kept),
        answer,
        model,
        verdicts,
        passRate: creditedRate(verdicts, ctx.config.verification.vacuous),
        attempts: regeneration + 1,
        atStake,
        validation,
        ruleRejections,
        ...keptReasoning(ctx, reasoning),
      };
    }
    refusal = judgement;
    ruleRejections[judgement.rule] = (ruleRejections[judgement.rule] ?? 0) + 1;
  }
  throw new SampleRejection(`rejected: ${refusal!.rule}: ${strategy} pair, after ${maxAnswers} rejected answers: ${refusal!.detail}`, {
    verdicts,
    strategy,
    ruleRejections,
    atStake,
  });
}
