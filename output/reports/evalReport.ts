/**
 * `mmif eval`'s single-turn report, MM-IFEval's reporting: constraint-level accuracy (constraints
 * followed / constraints scored) and instruction-level accuracy (responses following every scored
 * constraint), overall, per judge method (`rule_based`, `direct_gpt`, `cmp_gpt`, each on its own and
 * all in the totals), per category and per constraint type. Judged constraints are scored by the
 * builds' judges when a judge endpoint is set; otherwise they are counted as not scored, never guessed.
 */
import { constraintType } from '../../domain/constraints/catalogue.js';
import type { ItemResult } from '../../pipeline/evaluation/evalSlice.js';
import type { StageUsage } from '../contracts/manifest.js';

interface Accuracy {
  followed: number;
  scored: number;
  accuracy: number | null;
}

/** Which eval a report is: its id (model, prompt form, hash of the settings), its prompt form and settings. */
export interface EvalIdentity {
  evalId: string;
  /** The user prompt form: `inline` (make_prompt_v2), `numbered`, or `multiturn` for chats. */
  prompt: 'inline' | 'numbered' | 'multiturn';
  /** The eval config's settings that shape the report (config/evalConfig.ts evalFingerprintMaterial). */
  config: Record<string, unknown>;
}

export interface EvalReport extends EvalIdentity {
  model: string;
  /** The judge endpoint's model, or null: judged constraints were not scored. */
  judgeModel: string | null;
  simulated: boolean;
  /** Samples evaluated (rejected ones excluded). */
  samples: number;
  /** Responses per sample (`--samples`); accuracies are over every response. */
  responsesPerSample: number;
  constraintLevel: Accuracy;
  instructionLevel: Accuracy;
  byMethod: Record<string, Accuracy>;
  byCategory: Record<string, Accuracy>;
  byType: Record<string, Accuracy>;
  /** Judged constraint verdicts left unscored because no judge endpoint was set. */
  judgeConstraintsNotScored: number;
  /** Judge replies with no verdict even after a reminder: counted as not followed (as builds do). */
  judgeUnparsed: number;
  /** Samples that could not be evaluated, with the reason. */
  rejected: Array<{ id: string; reason: string }>;
  /** Model calls by stage: `answer` = the model under evaluation, `judge` = the judge; cached ones were not paid again. */
  usage: Record<string, StageUsage>;
}

const tally = () => ({ followed: 0, scored: 0 });
const finish = (t: { followed: number; scored: number }): Accuracy => ({ ...t, accuracy: t.scored === 0 ? null : t.followed / t.scored });

function bucket(map: Map<string, { followed: number; scored: number }>, key: string) {
  let t = map.get(key);
  if (!t) map.set(key, (t = tally()));
  return t;
}

const table = (map: Map<string, { followed: number; scored: number }>) => Object.fromEntries([...map].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, t]) => [k, finish(t)]));

export function scoreSingleTurn(results: readonly ItemResult[], meta: Pick<EvalReport, keyof EvalIdentity | 'model' | 'judgeModel' | 'simulated' | 'usage'>): EvalReport {
  const constraintLevel = tally();
  const instructionLevel = tally();
  const byMethod = new Map<string, ReturnType<typeof tally>>();
  const byCategory = new Map<string, ReturnType<typeof tally>>();
  const byType = new Map<string, ReturnType<typeof tally>>();
  let notScored = 0;
  let unparsed = 0;
  let perSample: number | undefined;
  const rejected: EvalReport['rejected'] = [];
  let samples = 0;
  for (const result of results) {
    if (result.rejected !== undefined) {
      rejected.push({ id: result.id, reason: result.rejected });
      continue;
    }
    const verdicts = result.verdicts ?? [];
    if (perSample !== undefined && verdicts.length !== perSample) throw new Error(`sample ${result.id}: ${verdicts.length} responses, others have ${perSample}`);
    perSample = verdicts.length;
    samples += 1;
    for (const response of verdicts) {
      const scored = response.filter((v) => v.passed !== null);
      notScored += response.length - scored.length;
      unparsed += response.filter((v) => v.unparsed).length;
      if (scored.length === 0) continue;
      instructionLevel.scored++;
      if (scored.every((v) => v.passed)) instructionLevel.followed++;
      for (const v of scored) {
        const category = constraintType(v.key)?.category ?? 'unknown type';
        for (const t of [constraintLevel, bucket(byMethod, v.method), bucket(byCategory, category), bucket(byType, v.key)]) {
          t.scored++;
          if (v.passed) t.followed++;
        }
      }
    }
  }
  return {
    evalId: meta.evalId,
    prompt: meta.prompt,
    config: meta.config,
    model: meta.model,
    judgeModel: meta.judgeModel,
    simulated: meta.simulated,
    samples,
    responsesPerSample: perSample ?? 0,
    constraintLevel: finish(constraintLevel),
    instructionLevel: finish(instructionLevel),
    byMethod: table(byMethod),
    byCategory: table(byCategory),
    byType: table(byType),
    judgeConstraintsNotScored: notScored,
    judgeUnparsed: unparsed,
    rejected,
    usage: meta.usage,
  };
}

const pct = (a: Accuracy) => (a.accuracy === null ? 'n/a' : `${(100 * a.accuracy).toFixed(1)}% (${a.followed}/${a.scored})`);

export function evalMarkdown(report: EvalReport): string {
  const rows = (title: string, t: Record<string, Accuracy>) => [
    `| ${title} | constraint-level accuracy |`,
    '|---|---|',
    ...Object.entries(t).map(([k, a]) => `| ${k} | ${pct(a)} |`),
  ];
  const judging = report.judgeModel
    ? `rule-verified constraints and judged ones (judge \`${report.judgeModel}\`${report.judgeUnparsed > 0 ? `; ${report.judgeUnparsed} judge verdicts unparsed, counted as not followed` : ''})`
    : `rule-verified constraints only (no judge endpoint: ${report.judgeConstraintsNotScored} judged constraint verdicts not scored)`;
  const paid = Object.values(report.usage).reduce((n, u) => n + u.requests - u.cachedRequests, 0);
  const cached = Object.values(report.usage).reduce((n, u) => n + u.cachedRequests, 0);
  return [
    `# mmif eval: ${report.model}${report.simulated ? ' (SIMULATED: answers came from the mmif simulator)' : ''}`,
    '',
    `Eval \`${report.evalId}\`: the ${report.prompt} prompt form; ${report.samples} held-out samples, ${report.responsesPerSample} response(s) each; ${judging}.`,
    ...(report.rejected.length > 0 ? ['', `${report.rejected.length} sample(s) could not be evaluated: ${report.rejected.map((r) => `${r.id} (${r.reason})`).join('; ')}.`] : []),
    '',
    `- Constraint-level accuracy: ${pct(report.constraintLevel)}`,
    `- Instruction-level accuracy: ${pct(report.instructionLevel)}`,
    '',
    ...rows('Judge method', report.byMethod),
    '',
    ...rows('Category', report.byCategory),
    '',
    ...rows('Constraint type', report.byType),
    '',
    `Model calls of this eval (every run of its id): ${paid} paid, ${cached} answered from the cache.`,
    '',
  ].join('\n');
}
