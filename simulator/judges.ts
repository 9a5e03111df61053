/**
 * Replies for the verification stages: the direct judge (paper Fig. 22), the compare judge
 * (Fig. 21) and verifier selection (Fig. 20). Verdicts on constraints the simulator can check
 * itself are true; the rest are lenient coin flips. The text carries some of the formatting
 * noise real judges produce, so the pipeline's parsers have to be robust.
 */
import { COMPARE_JUDGE_LABELS } from '../prompts/compareJudgePrompt.js';
import { DIRECT_JUDGE_MARKERS } from '../prompts/directJudgePrompt.js';
import { VERIFIER_SELECTION_LABELS } from '../prompts/verifierSelectionPrompt.js';
import { section } from './promptSections.js';
import type { Rng } from './rng.js';
import { checkRule, parseRule, verifierCandidates, type VerifierCall } from './rules.js';

// ---------------------------------------------------------------------------------------
// Direct judge

interface DirectJudgePrompt {
  response: string;
  constraints: string[];
}

export function parseDirectJudgePrompt(text: string): DirectJudgePrompt {
  const { responseStart, responseEnd, listStart, listEnd, constraint } = DIRECT_JUDGE_MARKERS;
  const response = section(text, 'direct_judge', responseStart, responseEnd).replace(/^\n/, '').replace(/\n$/, '');
  const list = section(text, 'direct_judge', listStart, listEnd);
  return {
    response,
    constraints: list
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line.startsWith(constraint))
      .map((line) => line.slice(constraint.length).replace(/^\d+:/, '').trim()),
  };
}

const PASS_REASONS = ['The response satisfies constraint_{i}.', 'Constraint_{i} is fully met throughout the response.', 'For constraint_{i}, the requirement is followed.'];
const FAIL_REASONS = [
  'The response does not satisfy constraint_{i}.',
  'Constraint_{i} is not met: the response departs from it.',
  'For constraint_{i}, the requirement is broken at least once.',
];

/** "Judgement: …" with a sentence per constraint, then "Summary: Score of constraint_1: 1/1, …". */
export function writeDirectJudgement(prompt: DirectJudgePrompt, rng: Rng, leniency: number): string {
  const scores = prompt.constraints.map((constraint) => {
    const rule = parseRule(constraint);
    return (rule ? checkRule(rule, prompt.response) : rng.chance(leniency)) ? 1 : 0;
  });
  const judgement = scores.map((score, i) => rng.pick(score ? PASS_REASONS : FAIL_REASONS).replace('{i}', String(i + 1))).join(' ');
  const summary = scores.map((score, i) => `${scoreLabel(i + 1, rng)} ${score}/1`).join(', ');
  return `${label('Judgement', rng)} ${judgement}\n${label('Summary', rng)} ${summary}.`;
}

/** Mostly `Score of constraint_2:`, sometimes `Score of Constraint_2 :` as real judges write it. */
function scoreLabel(index: number, rng: Rng): string {
  return rng.chance(0.15) ? `Score of Constraint_${index} :` : `Score of constraint_${index}:`;
}

/** Mostly `Summary:`, sometimes bold markdown. */
function label(name: string, rng: Rng): string {
  return rng.chance(0.2) ? `**${name}:**` : `${name}:`;
}

// ---------------------------------------------------------------------------------------
// Compare judge

interface CompareJudgePrompt {
  withConstraint: string;
  withoutConstraint: string;
}

/** The two responses run until the next section; the "without" one ends at the instructions that follow it. */
export function parseCompareJudgePrompt(text: string): CompareJudgePrompt {
  const { withConstraint, withoutConstraint, steps } = COMPARE_JUDGE_LABELS;
  return {
    withConstraint: section(text, 'compare_judge', withConstraint, withoutConstraint).trim(),
    withoutConstraint: section(text, 'compare_judge', withoutConstraint, steps).trim(),
  };
}

/**
 * False for identical responses (the constraint changed nothing), else True with probability
 * `leniency`. The prompt asks for the single line `Summary: True|False`; like real judges, the
 * simulator sometimes adds a reason before it anyway, or quotes or bolds the line.
 */
export function writeCompareJudgement(prompt: CompareJudgePrompt, rng: Rng, leniency: number): string {
  const same = prompt.withConstraint.trim() === prompt.withoutConstraint.trim();
  const verdict = !same && rng.chance(leniency);
  const reason = same
    ? 'The two responses are identical, so the constraint had no effect on the answer.'
    : verdict
      ? 'The response under the constraint differs from the one without it and meets the requirement.'
      : 'The response under the constraint differs from the one without it, but it does not fully meet the requirement.';
  const word = verdict ? 'True' : 'False';
  const line = `${label('Summary', rng)} ${rng.chance(0.2) ? `"${word}"` : word}`;
  return rng.chance(0.2) ? `${reason}\n${line}` : line;
}

// ---------------------------------------------------------------------------------------
// Verifier selection

interface VerifierSelectionPrompt {
  constraint: string;
  functions: string[];
}

/** The constraint's line and the offered functions, listed as `- name(signature) …` lines under their heading. */
export function parseVerifierSelectionPrompt(text: string): VerifierSelectionPrompt {
  const list = section(text, 'verifier_selection', VERIFIER_SELECTION_LABELS.functions, '\n\n');
  return {
    constraint: section(text, 'verifier_selection', VERIFIER_SELECTION_LABELS.constraint, '\n').trim(),
    functions: [...list.matchAll(/^\s*-\s*([A-Za-z_]\w*)\(/gm)].map((match) => match[1] ?? ''),
  };
}

/** Share of replies naming a function that was not offered, so the caller's validation runs. */
const HALLUCINATION_RATE = 0.05;

/** `{"calls": [...]}` with the first offered function that fits the constraint, or `[]`. */
export function writeVerifierSelection(prompt: VerifierSelectionPrompt, rng: Rng): string {
  const rule = parseRule(prompt.constraint);
  const offered = new Set(prompt.functions);
  const fitting = rule && verifierCandidates(rule).find((candidate) => offered.has(candidate.func));
  const calls: VerifierCall[] = fitting ? [fitting] : [];
  return JSON.stringify({ calls: rng.chance(HALLUCINATION_RATE) ? [hallucinate(fitting, prompt.constraint)] : calls });
}

/** A plausible name that no list offers: the real one respelled, or a generic catch-all. */
function hallucinate(fitting: VerifierCall | undefined, constraint: string): VerifierCall {
  if (fitting) return { func: fitting.func.replace(/^check_(?:whether_)?/, 'verify_'), params: fitting.params };
  return { func: 'verify_response_follows_constraint', params: [constraint] };
}
