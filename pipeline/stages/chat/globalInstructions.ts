/**
 * The global instructions `mmif eval --chats` gives (MMMT-IF, seed 002), and the seeded plan of one
 * eval chat. Builds plan from their generated constraints; an eval has none, so it draws from these
 * templates: rule-checkable types only, phrased so the deterministic verifier selection
 * (verification/selection.ts) maps each to code. An instruction whose phrasing it does not map, or
 * whose calls are not among its type's catalogue verifiers, is a programming error caught here and in
 * the unit test. Turns, conflicts across the whole chat and repeated types follow the one chat plan
 * (domain/multiturn/chatPlan.ts).
 */
import { assignInstructions, instructionTurns, type ChatInstruction } from '../../../domain/multiturn/chatPlan.js';
import { pickOne, rngFor, shuffled } from '../../../domain/random.js';
import { catalogueRuleCalls } from '../../../verification/selection.js';
import type { RuleCheckedInstruction } from './turnScore.js';

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

export type GlobalInstruction = RuleCheckedInstruction;

interface EvalChatPlan {
  chatId: string;
  turns: number;
  /** In turn order; at most one per turn. */
  instructions: Array<ChatInstruction<GlobalInstruction>>;
}

interface EvalChatPlanOptions {
  seed: string | number;
  turns: number;
  /** Seed 002 gives up to 6 per chat. */
  maxInstructions: number;
}

/** The instruction a template yields for a parameter, with its verifier calls. */
function instructionFor(template: InstructionTemplate, param: string): GlobalInstruction {
  const value = template.make(param);
  const calls = catalogueRuleCalls(template.type, value);
  if (!calls) {
    throw new Error(`multi-turn template for ${template.type} is not rule-checkable as phrased: "${value}"`);
  }
  return { type: template.type, value, method: 'rule', verifiers: calls };
}

/** Every instruction the planner can give, in a fixed order (the test checks each is verified by code). */
export function allGlobalInstructions(): GlobalInstruction[] {
  return TEMPLATES.flatMap((t) => t.params.map((p) => instructionFor(t, p)));
}

/** A seeded plan: the one chat plan's turns, over one seeded phrasing of each template in seeded order. */
export function planEvalChat(chatId: string, options: EvalChatPlanOptions): EvalChatPlan {
  const { seed, turns, maxInstructions } = options;
  const rng = rngFor(seed, chatId, 'multiturn-plan');
  const candidates = shuffled(rng, TEMPLATES).map((template) => instructionFor(template, pickOne(rng, template.params)));
  let at: number[];
  try {
    at = instructionTurns(rng, turns, maxInstructions);
  } catch (err) {
    throw new Error(`chat ${chatId}: ${(err as Error).message}`);
  }
  return { chatId, turns, instructions: assignInstructions(at, candidates).instructions };
}
