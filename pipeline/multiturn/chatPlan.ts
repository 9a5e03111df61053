/**
 * Plans one multi-turn chat (MMMT-IF, seed 002): which question turns add a global instruction, and
 * which instruction. Instructions are drawn only from rule-checkable constraint types, phrased so
 * the deterministic verifier selection (verification/selection.ts) maps each to code; an instruction
 * whose phrasing it does not map, or whose calls are not among its type's catalogue verifiers, is a
 * programming error caught here and in the unit test. Compatibility is checked against every
 * instruction already in the chat (domain/constraints/compatibility.ts), not per turn, because a
 * global instruction constrains every later answer.
 */
import { constraintType } from '../../domain/constraints/catalogue.js';
import { removeConflicts, type CheckedConstraint, type VerifierCall } from '../../domain/constraints/compatibility.js';
import { pickOne, rngFor, sampleK, shuffled } from '../../domain/random.js';
import { parseVerifierCalls } from '../../verification/selection.js';

/** A phrasing family of one constraint type; `make` fills in a seeded parameter. */
interface InstructionTemplate {
  type: string;
  params: readonly string[];
  make: (param: string) => string;
}

// Parameters keep every instruction satisfiable together with the others in an image Q&A answer.
const TEMPLATES: readonly InstructionTemplate[] = [
  { type: 'sentence_number_limit', params: ['3', '4', '5', '6'], make: (n) => `From now on, answer in at most ${n} sentences.` },
  { type: 'word_count_range_limit', params: ['20', '30', '40'], make: (lo) => `From now on, use between ${lo} and ${Number(lo) + 80} words in each answer.` },
  { type: 'mention', params: ['overall', 'notably', 'visible', 'scene'], make: (w) => `From now on, mention the word '${w}' at least once in every answer.` },
  { type: 'not_mention', params: ['very', 'really', 'beautiful', 'clearly'], make: (w) => `From now on, do not use the word '${w}' in any answer.` },
  { type: 'prefix_and_suffix', params: ['Looking closely,', 'In short,'], make: (p) => `From now on, start every answer with '${p}'` },
  { type: 'prefix_and_suffix', params: ['Hope this helps.', 'That is all.'], make: (s) => `From now on, end every answer with '${s}'` },
  { type: 'precision', params: ['no-numbers'], make: () => 'From now on, do not use any numbers or digits in your answers.' },
];

export interface GlobalInstruction extends CheckedConstraint {
  /** The question turn (1-based) it is given at. */
  turn: number;
  verifiers: VerifierCall[];
}

export interface ChatPlan {
  chatId: string;
  turns: number;
  /** In turn order; at most one per turn. */
  instructions: GlobalInstruction[];
}

export interface ChatPlanOptions {
  seed: string | number;
  turns: number;
  /** Seed 002 gives up to 6 per chat. */
  maxInstructions: number;
}

/** The instruction a template yields for a parameter, with its verifier calls. */
export function instructionFor(template: InstructionTemplate, param: string): CheckedConstraint & { verifiers: VerifierCall[] } {
  const value = template.make(param);
  const calls = parseVerifierCalls(template.type, value);
  const allowed = constraintType(template.type)?.verifiers ?? [];
  if (!calls || calls.some((c) => !allowed.includes(c.func))) {
    throw new Error(`multi-turn template for ${template.type} is not rule-checkable as phrased: "${value}"`);
  }
  return { type: template.type, value, verifiers: calls };
}

/** Every instruction the planner can give, in a fixed order (the test checks each is verified by code). */
export function allGlobalInstructions(): Array<CheckedConstraint & { verifiers: VerifierCall[] }> {
  return TEMPLATES.flatMap((t) => t.params.map((p) => instructionFor(t, p)));
}

export function planChat(chatId: string, options: ChatPlanOptions): ChatPlan {
  const { seed, turns, maxInstructions } = options;
  if (!Number.isInteger(turns) || turns < 1) throw new Error(`chat ${chatId}: turns must be a positive integer, got ${turns}`);
  if (!Number.isInteger(maxInstructions) || maxInstructions < 0) throw new Error(`chat ${chatId}: maxInstructions must be a non-negative integer, got ${maxInstructions}`);
  const rng = rngFor(seed, chatId, 'multiturn-plan');
  const count = Math.min(maxInstructions, turns);
  // Draw candidates one template at a time in seeded order; each must fit the whole chat so far.
  const accepted: Array<CheckedConstraint & { verifiers: VerifierCall[] }> = [];
  for (const template of shuffled(rng, TEMPLATES)) {
    if (accepted.length === count) break;
    const candidate = instructionFor(template, pickOne(rng, template.params));
    const { kept } = removeConflicts([...accepted, candidate], 'open');
    if (kept.length === accepted.length + 1) accepted.push(candidate);
  }
  const atTurns = sampleK(rng, Array.from({ length: turns }, (_, i) => i + 1), accepted.length);
  return { chatId, turns, instructions: accepted.map((c, i) => ({ ...c, turn: atTurns[i]! })) };
}

/** The instructions in force at a question turn: those given at or before it. */
export function instructionsGivenBy(plan: ChatPlan, turn: number): GlobalInstruction[] {
  return plan.instructions.filter((i) => i.turn <= turn);
}
