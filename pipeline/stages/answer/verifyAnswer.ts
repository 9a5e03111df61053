/**
 * Verifies one answer against (a subset of) a sample's constraints: rule functions where the
 * constraint has verifier calls, otherwise the LLM judges — one direct-judge call (with the image)
 * for all direct-judged constraints, one compare-judge call per compare-judged constraint against
 * an answer generated without it. Every constraint gets a verdict with a short detail.
 */
import { endpointFor } from '../../../config/endpointRouting.js';
import type { CallRecord } from '../../../llm/callRecord.js';
import type { ModelRequest } from '../../../llm/modelRequest.js';
import { renderAnswerPrompt } from '../../../prompts/answerPrompt.js';
import { rngFor } from '../../../domain/random.js';
import { SampleRejection } from '../../../domain/rejection.js';
import { runVerifierCall } from '../../../verification/functions.js';
import { compareJudgeVerdict, directJudgeScores, type AskJudge } from '../../judges.js';
import { callBranches } from '../../run/callBranches.js';
import type { StageContext } from '../../run/context.js';
import type { SampleImage } from '../../run/sampleImage.js';
import type { PlannedConstraint } from '../../run/stageState.js';
import type { Verdict } from '../../../domain/verdict.js';
import type { Task } from './answerRequest.js';
import { priorJudgement, type PriorJudgement } from './priorJudgements.js';

interface AnswerUnderTest {
  task: Task;
  /** All the sample's constraints (`indices` picks the ones to verify). */
  constraints: readonly PlannedConstraint[];
  answer: string;
  image: SampleImage;
  /** Indices of the constraints to verify (default: all). */
  indices?: readonly number[];
  /** Whether sampled rule verdicts get the judge's second opinion (judgeAgreementSample); default true. */
  auditJudge?: boolean;
  /** Direct-judge scores given earlier in the sample: one on this same text is reused, not asked again (priorJudgements.ts). */
  priors?: readonly PriorJudgement[];
  /**
   * The answers made without each compare-judged constraint, by index (withoutAnswers): given, those
   * constraints are compare-judged against them; not given (the rejected stage), they are direct-judged.
   */
  withouts?: ReadonlyMap<number, string>;
}

export async function verifyAnswer(ctx: StageContext, subject: AnswerUnderTest, calls: CallRecord[]): Promise<Verdict[]> {
  const indices = subject.indices ?? subject.constraints.map((_, i) => i);
  const verdicts: Verdict[] = [];
  const direct: number[] = [];
  const compare: Array<[index: number, without: string]> = [];
  for (const index of indices) {
    const c = subject.constraints[index]!;
    const without = c.method === 'compare_judge' ? subject.withouts?.get(index) : undefined;
    if (c.method === 'rule') verdicts.push(ruleVerdict(index, c, subject.answer));
    else if (without !== undefined) compare.push([index, without]);
    else direct.push(index);
  }
  // The direct judge, each compare judge and the audit of the rule verdicts ask about the same answer
  // and not about each other's replies: sent together (callBranches.ts).
  const rules = [...verdicts];
  const judged = await callBranches<Verdict[][]>(calls, [
    ...(direct.length > 0 ? [(branch: CallRecord[]) => judgedOnce(ctx, subject, direct, branch)] : []),
    ...compare.map(([index, without]) => async (branch: CallRecord[]) => [await compareJudge(ctx, subject, index, without, branch)]),
    async (branch: CallRecord[]) => {
      if (subject.auditJudge !== false) await auditRuleVerdicts(ctx, subject, rules, branch);
      return [];
    },
  ]);
  return [...verdicts, ...judged.flat()].sort((a, b) => a.index - b.index);
}

/**
 * The judge-vs-rule sample (`verification.judgeAgreementSample`): a seeded share of the rule-checked
 * constraints is also scored by the direct judge, in a call of its own, so the judged constraints'
 * call and every verdict used for filtering are the same with or without it. The choice depends on
 * the build seed and the constraint only, so a regenerated or rejected answer is audited on the
 * same constraints. An unusable judge reply leaves the audit unscored instead of rejecting the sample.
 */
async function auditRuleVerdicts(ctx: StageContext, subject: AnswerUnderTest, verdicts: Verdict[], calls: CallRecord[]): Promise<void> {
  const share = ctx.config.verification.judgeAgreementSample;
  const audited = verdicts.filter((v) => {
    const c = subject.constraints[v.index]!;
    return v.method === 'rule' && share > 0 && rngFor(ctx.config.seed, 'judge-agreement', c.type, c.value)() < share;
  });
  if (audited.length === 0) return;
  const judgeModel = endpointFor(ctx.config, 'judge').model;
  let scores: Verdict[];
  try {
    scores = await directJudge(
      ctx,
      subject,
      audited.map((v) => v.index),
      calls,
    );
  } catch (err) {
    if (!(err instanceof SampleRejection)) throw err;
    for (const v of audited) v.judgeAudit = { passed: null, judgeModel, detail: `unusable: ${err.reason}` };
    return;
  }
  for (const [i, v] of audited.entries()) {
    const score = scores[i]!;
    v.judgeAudit = { passed: score.detail.startsWith('unparsed') ? null : score.passed, judgeModel, detail: score.detail };
  }
}

/**
 * A rule-checked constraint's verdict on an answer: every verifier call must pass (also scores
 * multi-turn chats). It is vacuous when any call found nothing to check: a constraint only partly
 * exercised is not credited under `verification.vacuous: "fail"`.
 */
export function ruleVerdict(index: number, c: Pick<PlannedConstraint, 'type' | 'verifiers'>, answer: string): Verdict {
  const outcomes = c.verifiers.map((call) => ({ call, outcome: runVerifierCall(answer, call) }));
  const failed = outcomes.find((o) => !('passed' in o.outcome) || !o.outcome.passed);
  const vacuous = outcomes.some((o) => 'vacuous' in o.outcome && o.outcome.vacuous);
  const describe = (o: (typeof outcomes)[number]) =>
    `${o.call.func}(${JSON.stringify(o.call.params).slice(1, -1)}) = ${'passed' in o.outcome ? `${o.outcome.passed}${o.outcome.vacuous ? ' (vacuous)' : ''}` : `error: ${o.outcome.error}`}`;
  return {
    index,
    type: c.type,
    method: 'rule',
    passed: !failed,
    vacuous,
    calls: c.verifiers,
    detail: failed ? describe(failed) : outcomes.map(describe).join('; '),
  };
}

/**
 * A judge's reply text. An unusable reply is tried again by the model caller; when every try fails
 * the sample is rejected for the model call (and tried again by a later run), not judged on noise.
 */
export function judgeOf(ctx: StageContext, calls: CallRecord[]): AskJudge {
  return (prompt, image) => {
    const request: ModelRequest = { stage: 'judge', endpoint: endpointFor(ctx.config, 'judge'), prompt, image, temperature: ctx.config.llm.judgeTemperature };
    return ctx.models.text(request, calls);
  };
}

/** Direct-judge verdicts on `indices`, reusing a score the sample already has on this same text and asking the judge only for the rest. */
async function judgedOnce(ctx: StageContext, subject: AnswerUnderTest, indices: number[], calls: CallRecord[]): Promise<Verdict[]> {
  const reused = new Map(indices.flatMap((index) => [priorJudgement(subject.priors ?? [], subject.answer, index)].flatMap((p) => (p ? [[index, p] as const] : []))));
  const asked = indices.filter((index) => !reused.has(index));
  const judged = asked.length > 0 ? await directJudge(ctx, subject, asked, calls) : [];
  const model = endpointFor(ctx.config, 'judge').model;
  return indices.map((index) => {
    const prior = reused.get(index);
    if (!prior) return judged[asked.indexOf(index)]!;
    return {
      index,
      type: subject.constraints[index]!.type,
      method: 'direct_judge',
      passed: prior.passed,
      judgeModel: model,
      detail: scoreDetail(prior.passed),
      reusedFrom: prior.from,
    };
  });
}

const scoreDetail = (score: boolean | undefined): string => (score === undefined ? 'unparsed: the judge gave no score' : `score ${score ? 1 : 0}/1`);

async function directJudge(ctx: StageContext, subject: AnswerUnderTest, indices: number[], calls: CallRecord[]): Promise<Verdict[]> {
  const model = endpointFor(ctx.config, 'judge').model;
  const scores = await directJudgeScores(
    judgeOf(ctx, calls),
    subject.answer,
    indices.map((i) => subject.constraints[i]!.value),
    subject.image,
  );
  return indices.map((index, i) => ({
    index,
    type: subject.constraints[index]!.type,
    method: 'direct_judge',
    passed: scores[i] === true,
    judgeModel: model,
    detail: scoreDetail(scores[i]),
  }));
}

/**
 * The answers made without each compare-judged constraint, by index (the compare judge's other side,
 * Fig. 21). They ask nothing about the answer under test: the answer stage makes them beside its first
 * answer and every regeneration judges against the same ones.
 */
export async function withoutAnswers(
  ctx: StageContext,
  task: Task,
  constraints: readonly PlannedConstraint[],
  image: SampleImage,
  calls: CallRecord[],
): Promise<Map<number, string>> {
  const indices = constraints.flatMap((c, i) => (c.method === 'compare_judge' ? [i] : []));
  const texts = await callBranches(
    calls,
    indices.map((index) => (branch: CallRecord[]) => withoutAnswer(ctx, task, constraints, index, image, branch)),
  );
  return new Map(indices.map((index, i) => [index, texts[i]!]));
}

function withoutAnswer(ctx: StageContext, task: Task, constraints: readonly PlannedConstraint[], index: number, image: SampleImage, calls: CallRecord[]): Promise<string> {
  const others = constraints.filter((_, i) => i !== index);
  const prompt = renderAnswerPrompt(task.instruction, others, task.reference);
  return ctx.models.text({ stage: 'answer', endpoint: endpointFor(ctx.config, 'answer'), prompt, image }, calls);
}

async function compareJudge(ctx: StageContext, subject: AnswerUnderTest, index: number, without: string, calls: CallRecord[]): Promise<Verdict> {
  const c = subject.constraints[index]!;
  const verdict = await compareJudgeVerdict(judgeOf(ctx, calls), c.value, subject.answer, without);
  return {
    index,
    type: c.type,
    method: 'compare_judge',
    passed: verdict === true,
    judgeModel: endpointFor(ctx.config, 'judge').model,
    detail: verdict === undefined ? 'unparsed: the judge gave no True/False' : `judged ${verdict}`,
    without,
  };
}
