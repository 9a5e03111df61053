/**
 * Deterministic compatibility rules, applied around the model's own compatibility pass: types a
 * kind of instruction cannot carry are never offered, and declared conflicts (between types, and
 * between the verifier calls of two constraints) are removed, the later constraint giving way.
 */
import { constraintType, typesConflict, type InstructionKind } from './catalogue.js';
import type { Constraint } from './selection.js';

export interface VerifierCall {
  func: string;
  params: unknown[];
}

export type CheckedConstraint = Constraint & { verifiers?: VerifierCall[] };

const SHORT_QUESTION = /^(is|are|does|do|did|can|could|was|were|will|would|has|have|which|who|what colou?r|how many|what time)\b/i;
const ONE_WORD = /\b(one|single) word\b|\byes or no\b|\bin a word\b/i;
const SHORT_TEXT = /\b(caption|tweet|slogan|headline|title|hashtag|one sentence|single sentence)\b/i;

/** A coarse reading of the instruction: enough to keep "exactly 4 paragraphs" off "What color is the truck?". */
export function classifyInstruction(instruction: string): InstructionKind {
  const text = instruction.trim();
  const words = text.split(/\s+/).length;
  if (ONE_WORD.test(text) || (text.endsWith('?') && words <= 12 && SHORT_QUESTION.test(text))) return 'short_answer';
  if (SHORT_TEXT.test(text)) return 'short_text';
  return 'open';
}

export function typeSuitableFor(key: string, kind: InstructionKind): boolean {
  return !(constraintType(key)?.unsuitableFor.includes(kind) ?? true);
}

/** Removes constraints that do not fit the instruction or conflict with an earlier constraint. */
export function removeConflicts<C extends CheckedConstraint>(constraints: readonly C[], kind: InstructionKind): { kept: C[]; removed: Array<{ constraint: C; reason: string }> } {
  const kept: C[] = [];
  const removed: Array<{ constraint: C; reason: string }> = [];
  for (const c of constraints) {
    const reason = !typeSuitableFor(c.type, kind)
      ? `unsuitable: ${c.type} does not fit a ${kind.replace('_', ' ')} instruction`
      : kept.map((k) => conflictBetween(k, c)).find((r) => r !== undefined);
    if (reason) removed.push({ constraint: c, reason });
    else kept.push(c);
  }
  return { kept, removed };
}

function conflictBetween(earlier: CheckedConstraint, later: CheckedConstraint): string | undefined {
  if (typesConflict(earlier.type, later.type)) return `conflict: ${later.type} conflicts with ${earlier.type}`;
  for (const a of earlier.verifiers ?? []) {
    for (const b of later.verifiers ?? []) {
      const reason = callsConflict(a, b) ?? callsConflict(b, a);
      if (reason) return `conflict: ${reason} (with the ${earlier.type} constraint)`;
    }
  }
  return undefined;
}

const RANGE_FUNCTIONS = new Set([
  'check_whether_response_paragraph_number_in_range',
  'check_whether_response_sentence_number_in_range',
  'check_whether_each_paragraph_sentence_number_in_range',
  'check_whether_response_word_count_in_range',
  'check_whether_each_paragraph_word_count_in_range',
]);
const KEYWORD_FUNCTIONS = new Set(['check_whether_each_keyword_in_list_mentioned_in_range', 'check_whether_total_keyword_in_list_mentioned_in_range']);
const NOT_CONTAIN_FUNCTIONS = new Set(['check_whether_whole_response_not_contain_certain_substring', 'check_whether_whole_response_not_contain_certain_substrings']);
const AFFIX_FUNCTIONS = new Set(['check_whether_whole_response_begin_with_certain_substring', 'check_whether_whole_response_end_with_certain_substring']);

/** One direction of a conflict between two calls; callers try both orders. */
function callsConflict(a: VerifierCall, b: VerifierCall): string | undefined {
  if (RANGE_FUNCTIONS.has(a.func) && a.func === b.func) {
    const [aLo, aHi] = a.params as number[];
    const [bLo, bHi] = b.params as number[];
    if (aHi! < bLo! || bHi! < aLo!) return `${a.func} ranges [${aLo}, ${aHi}] and [${bLo}, ${bHi}] cannot both hold`;
  }
  if (KEYWORD_FUNCTIONS.has(a.func) && NOT_CONTAIN_FUNCTIONS.has(b.func)) {
    const [keywords, lower] = a.params as [string[], number];
    const forbidden = (b.params.flat() as string[]).map((s) => s.toLowerCase());
    const clash = keywords.find((k) => lower > 0 && forbidden.some((f) => k.toLowerCase().includes(f)));
    if (clash) return `'${clash}' is both required and forbidden`;
  }
  if (a.func === 'check_number_precision_in_response' && b.func === 'check_whether_has_no_arabic_number_in_response') {
    return 'a number precision and "no numbers" cannot both apply';
  }
  if (AFFIX_FUNCTIONS.has(a.func) && a.func === b.func) {
    const [x] = a.params as string[];
    const [y] = b.params as string[];
    const compatible = a.func.includes('begin') ? x!.startsWith(y!) || y!.startsWith(x!) : x!.endsWith(y!) || y!.endsWith(x!);
    if (!compatible) return `the response cannot ${a.func.includes('begin') ? 'begin' : 'end'} with both '${x}' and '${y}'`;
  }
  return undefined;
}
