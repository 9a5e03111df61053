/**
 * `mmif eval`'s single-turn scoring, MM-IFEval's reporting: constraint-level accuracy (constraints
 * followed / constraints scored) and instruction-level accuracy (samples whose every scored
 * constraint is followed), overall, per category and per constraint type. Only `rule_based`
 * constraints are scored here, with the same rule verifiers as the builds; judge-scored constraints
 * are counted as not scored (the report says how many), never guessed.
 */
import { constraintType } from '../domain/constraints/catalogue.js';
import { runVerifierCall } from '../verification/functions.js';
import type { MmifevalLine } from './mmifeval.js';

export interface Accuracy {
  followed: number;
  scored: number;
  accuracy: number | null;
}

export interface EvalReport {
  model: string;
  simulated: boolean;
  samples: number;
  /** Responses per sample (`--samples`); accuracies are over every response. */
  responsesPerSample: number;
  constraintLevel: Accuracy;
  instructionLevel: Accuracy;
  byCategory: Record<string, Accuracy>;
  byType: Record<string, Accuracy>;
  /** Constraints left to a judge (direct_gpt, cmp_gpt): not scored by this report. */
  judgeConstraintsNotScored: number;
}

/** A response's verdict per rule-based constraint key; a bad verifier call names the sample. */
export function ruleVerdicts(line: MmifevalLine, response: string): Map<string, boolean> {
  const verdicts = new Map<string, boolean>();
  for (const c of line.constraints) {
    if (c.judge.method !== 'rule_based') continue;
    const passed = (c.judge.verify_funcs ?? []).every((call) => {
      const outcome = runVerifierCall(response, call);
      if ('error' in outcome) throw new Error(`sample ${line.id}, constraint ${c.key}: ${outcome.error}`);
      return outcome.passed;
    });
    verdicts.set(c.key, passed);
  }
  return verdicts;
}

const tally = () => ({ followed: 0, scored: 0 });
const finish = (t: { followed: number; scored: number }): Accuracy => ({ ...t, accuracy: t.scored === 0 ? null : t.followed / t.scored });

/** Scores the main lines; `responses` maps a line's id to its N responses. */
export function scoreSingleTurn(lines: readonly MmifevalLine[], responses: ReadonlyMap<string, readonly string[]>, model: string, simulated: boolean): EvalReport {
  const main = lines.filter((l) => l.infer_type === 'main');
  const constraintLevel = tally();
  const instructionLevel = tally();
  const byCategory = new Map<string, ReturnType<typeof tally>>();
  const byType = new Map<string, ReturnType<typeof tally>>();
  let judged = 0;
  let perSample: number | undefined;
  for (const line of main) {
    const answers = responses.get(line.id);
    if (!answers || answers.length === 0) throw new Error(`sample ${line.id}: no response to score`);
    if (perSample !== undefined && answers.length !== perSample) throw new Error(`sample ${line.id}: ${answers.length} responses, others have ${perSample}`);
    perSample = answers.length;
    judged += line.constraints.filter((c) => c.judge.method !== 'rule_based').length;
    for (const answer of answers) {
      const verdicts = ruleVerdicts(line, answer);
      if (verdicts.size === 0) continue;
      instructionLevel.scored++;
      if ([...verdicts.values()].every(Boolean)) instructionLevel.followed++;
      for (const [key, passed] of verdicts) {
        const category = constraintType(key)?.category ?? 'unknown type';
        for (const t of [constraintLevel, bucket(byCategory, category), bucket(byType, key)]) {
          t.scored++;
          if (passed) t.followed++;
        }
      }
    }
  }
  return {
    model,
    simulated,
    samples: main.length,
    responsesPerSample: perSample ?? 0,
    constraintLevel: finish(constraintLevel),
    instructionLevel: finish(instructionLevel),
    byCategory: Object.fromEntries([...byCategory].sort().map(([k, t]) => [k, finish(t)])),
    byType: Object.fromEntries([...byType].sort().map(([k, t]) => [k, finish(t)])),
    judgeConstraintsNotScored: judged * (perSample ?? 0),
  };
}

function bucket(map: Map<string, { followed: number; scored: number }>, key: string) {
  const existing = map.get(key);
  if (existing) return existing;
  const fresh = tally();
  map.set(key, fresh);
  return fresh;
}

const pct = (a: Accuracy) => (a.accuracy === null ? 'n/a' : `${(100 * a.accuracy).toFixed(1)}% (${a.followed}/${a.scored})`);

export function evalMarkdown(report: EvalReport): string {
  const rows = (title: string, table: Record<string, Accuracy>) => [`| ${title} | constraint-level accuracy |`, '|---|---|', ...Object.entries(table).map(([k, a]) => `| ${k} | ${pct(a)} |`)];
  return [
    `# mmif eval: ${report.model}${report.simulated ? ' (SIMULATED: answers came from the mmif simulator)' : ''}`,
    '',
    `${report.samples} held-out samples, ${report.responsesPerSample} response(s) each; rule-verified constraints only (${report.judgeConstraintsNotScored} judge-scored constraint verdicts not scored).`,
    '',
    `- Constraint-level accuracy: ${pct(report.constraintLevel)}`,
    `- Instruction-level accuracy: ${pct(report.instructionLevel)}`,
    '',
    ...rows('Category', report.byCategory),
    '',
    ...rows('Constraint type', report.byType),
    '',
  ].join('\n');
}
