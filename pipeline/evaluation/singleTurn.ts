/**
 * One held-out sample, MM-IFEval's way: the model answers the prompt N times (`seed` 0..N-1), and
 * each response is scored per constraint by its judge method: `rule_based` with the builds' rule
 * functions, `direct_gpt` by the direct judge (Fig. 22, one call per response, with the image) and
 * `cmp_gpt` by the compare judge (Fig. 21) against the model's answer to the `aux_cmp_gpt` line, the
 * same prompt without that constraint. Without a judge endpoint, judged constraints are not scored.
 */
import type { MmifevalLine } from '../../domain/mmifevalLine.js';
import { SampleRejection } from '../../domain/rejection.js';
import type { CallRecord } from '../../llm/callRecord.js';
import type { RenderedPrompt } from '../../prompts/chat.js';
import { trainingPromptText } from '../../prompts/trainingPrompt.js';
import { runVerifierCall } from '../../verification/functions.js';
import { compareJudgeVerdict, directJudgeScores, type AskJudge } from '../judges.js';
import type { SampleImage } from '../run/sampleImage.js';
import type { EvalContext } from './evalContext.js';
import type { SampleItem } from './evalItems.js';

const EVAL_PROMPT_VERSION = 'mmif-eval-v1';

export interface ConstraintVerdict {
  key: string;
  method: 'rule_based' | 'direct_gpt' | 'cmp_gpt';
  /** null: not scored (a judged constraint with no judge configured). */
  passed: boolean | null;
  /** Rule-based only: the response holds nothing the constraint speaks of (counted per `vacuous`). */
  vacuous?: boolean;
  /** The judge's reply had no verdict even after a reminder: counted as not followed, as builds do. */
  unparsed?: boolean;
  detail: string;
}

/** The model's answer to a line's prompt, draw `seed`. */
export function answerLine(ctx: EvalContext, line: MmifevalLine, image: SampleImage, seed: number, calls: CallRecord[]): Promise<string> {
  const text = trainingPromptText(
    ctx.config.prompt,
    line.instruction,
    line.constraints.map((c) => ({ type: c.key, value: c.value })),
  );
  const prompt: RenderedPrompt = { kind: 'answer', version: `${EVAL_PROMPT_VERSION}:${ctx.config.prompt}`, messages: [{ role: 'user', text, withImage: true }] };
  return ctx.models.text({ stage: 'answer', endpoint: ctx.config.model, prompt, image, seed }, calls);
}

/** Every constraint of `item` scored on `response` (draw `seed`, whose aux answers use the same seed). */
export async function scoreResponse(ctx: EvalContext, item: SampleItem, response: string, image: SampleImage, seed: number, calls: CallRecord[]): Promise<ConstraintVerdict[]> {
  const { main } = item;
  const verdicts = new Map<string, ConstraintVerdict>();
  const judge = ctx.config.judge;
  const ask: AskJudge | undefined =
    judge && ((prompt, img) => ctx.models.text({ stage: 'judge', endpoint: judge, prompt, image: img, temperature: ctx.config.llm.judgeTemperature }, calls));
  const direct = main.constraints.filter((c) => c.judge.method === 'direct_gpt');
  for (const c of main.constraints) {
    const method = c.judge.method;
    if (method === 'rule_based') {
      const outcomes = (c.judge.verify_funcs ?? []).map((call) => ({ call, outcome: runVerifierCall(response, call) }));
      const error = outcomes.find((o) => 'error' in o.outcome);
      if (error) throw new SampleRejection(`sample ${main.id}, constraint ${c.key}: ${(error.outcome as { error: string }).error}`);
      const failed = outcomes.find((o) => !(o.outcome as { passed: boolean }).passed);
      const vacuous = outcomes.find((o) => (o.outcome as { vacuous: boolean }).vacuous);
      // Under `vacuous: fail` a pass the response never exercised is not followed (domain/verdict.ts).
      const passed = !failed && (ctx.config.vacuous === 'pass' || !vacuous);
      const detail = failed ? `${failed.call.func} failed` : vacuous ? `${vacuous.call.func} passed vacuously` : 'every verifier call passed';
      verdicts.set(c.key, { key: c.key, method, passed, vacuous: vacuous !== undefined, detail });
    } else if (!ask) {
      verdicts.set(c.key, { key: c.key, method, passed: null, detail: 'not scored: no judge endpoint' });
    } else if (method === 'cmp_gpt') {
      const aux = item.aux.find((a) => a.del_cons === c.key);
      if (!aux) throw new SampleRejection(`sample ${main.id}, constraint ${c.key}: cmp_gpt needs its aux_cmp_gpt line (del_cons ${c.key}), which the split lacks`);
      const without = await answerLine(ctx, aux, image, seed, calls);
      const verdict = await compareJudgeVerdict(ask, c.value, response, without);
      verdicts.set(c.key, judged(c.key, method, verdict));
    }
  }
  if (ask && direct.length > 0) {
    const scores = await directJudgeScores(
      ask,
      response,
      direct.map((c) => c.value),
      image,
    );
    direct.forEach((c, i) => verdicts.set(c.key, judged(c.key, 'direct_gpt', scores[i])));
  }
  return main.constraints.map((c) => verdicts.get(c.key)!);
}

function judged(key: string, method: 'direct_gpt' | 'cmp_gpt', verdict: boolean | undefined): ConstraintVerdict {
  if (verdict === undefined) return { key, method, passed: false, unparsed: true, detail: 'unparsed: the judge gave no verdict (counted as not followed)' };
  return { key, method, passed: verdict, detail: `judged ${verdict}` };
}
