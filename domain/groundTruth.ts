/**
 * The ground truth a reward is computed from: one JSON shape, the same in every RL export (verl's
 * `reward_model.ground_truth`, the rlvr rows' `ground_truth`, LLaMA-Factory v1's `extra_info`) and in
 * what `mmif reward serve` takes inline. Per constraint: its type, its text, how it is verified
 * (`rule`, `direct_judge`, `compare_judge`) and, for rules, the verifier calls the build chose (function
 * name and arguments), so a reward never re-parses the constraint text; for compare-judged ones the
 * build's answer made without the constraint, which the compare judge weighs a response against as it
 * weighed the build's (the verdict's `without`); plus the image the judges see
 * and the vacuous-pass policy (`verification.vacuous`) the build credited verdicts under. Derived from
 * the record's planned constraints (never from its prompt text). `mmif schema --ground-truth` prints
 * the JSON Schema made from the zod schema below.
 */
import { z } from 'zod';
import { PermanentError } from './errors.js';
import { VACUOUS_POLICIES, type VacuousPolicy, type Verdict, type VerificationMethod } from './verdict.js';
import type { VerifierCall } from './constraints/compatibility.js';

const text = z.string().min(1);
const verifierCall = z
  .object({ func: text.describe('verifier function name (verification/functions.ts)'), params: z.array(z.unknown()).describe('its arguments, after the response') })
  .strict();
const ruleConstraint = z.object({ type: text, text: z.string(), method: z.literal('rule'), verifiers: z.array(verifierCall).min(1).describe('every call must pass') }).strict();
const directConstraint = z.object({ type: text, text: text, method: z.literal('direct_judge') }).strict();
const compareConstraint = z
  .object({
    type: text,
    text: text,
    method: z.literal('compare_judge'),
    without: text.describe("the build's answer generated without this constraint: the compare judge (Fig. 21) compares a response with it"),
  })
  .strict();

export const groundTruthSchema = z
  .object({
    id: text.describe('the record id'),
    image: text.describe("the record's image, relative to the dataset root (the judges see it)"),
    vacuous: z.enum(VACUOUS_POLICIES).describe('whether a vacuous rule pass counts (verification.vacuous)'),
    constraints: z.array(z.discriminatedUnion('method', [ruleConstraint, directConstraint, compareConstraint])).min(1),
  })
  .strict();
export type GroundTruth = z.infer<typeof groundTruthSchema>;
type GroundTruthConstraint = GroundTruth['constraints'][number];

export const groundTruthJsonSchema = (): Record<string, unknown> => ({ title: 'mmif-engine ground truth', ...z.toJSONSchema(groundTruthSchema) }) as Record<string, unknown>;

/**
 * What a record says of its constraints (an SFT record or a DPO pair: both carry the sample's planned
 * constraints, and the accepted answer's verdicts, which hold each compare-judged constraint's answer without it).
 */
interface PlannedRecord {
  id: string;
  image_path: string;
  constraints: ReadonlyArray<{ type: string; value: string; method: VerificationMethod; verifiers: readonly VerifierCall[] }>;
  verdicts: ReadonlyArray<Pick<Verdict, 'index' | 'method' | 'without'>>;
}

/** A compare-judged constraint whose record holds no answer without it: no reward can judge it as the build did. */
export class MissingComparisonError extends PermanentError {
  override name = 'MissingComparisonError';
}

/** A rule-checked constraint's ground truth: its text and the verifier calls the build chose. */
const ruleTruth = (type: string, text: string, verifiers: ReadonlyArray<{ func: string; params: unknown[] }>): GroundTruthConstraint => ({
  type,
  text,
  method: 'rule',
  verifiers: verifiers.map(({ func, params }) => ({ func, params })),
});

/** A record's ground truth. */
export function groundTruthOf(r: PlannedRecord, vacuous: VacuousPolicy): GroundTruth {
  return {
    id: r.id,
    image: r.image_path,
    vacuous,
    constraints: r.constraints.map((c, index): GroundTruthConstraint => {
      if (c.method === 'rule') return ruleTruth(c.type, c.value, c.verifiers);
      if (c.method === 'direct_judge') return { type: c.type, text: c.value, method: c.method };
      const without = r.verdicts.find((v) => v.index === index && v.method === 'compare_judge')?.without;
      if (!without) throw new MissingComparisonError(`record ${r.id}: constraint ${index} (${c.type}) is compare-judged but its verdict holds no answer made without it`);
      return { type: c.type, text: c.value, method: c.method, without };
    }),
  };
}

/** The id of a chat turn's ground truth: the chat's id and its 1-based question turn. */
export const chatTurnId = (chatId: string, turn: number): string => `${chatId}#turn-${turn}`;

/** What a chat record says of its instructions (all rule-checked: a multiturn build refuses judged ones). */
interface ChatInstructions {
  id: string;
  image_path: string;
  instructions: ReadonlyArray<{ turn: number; type: string; value: string; verifiers: ReadonlyArray<{ func: string; params: unknown[] }> }>;
  turns: ReadonlyArray<{ turn: number }>;
}

/**
 * A chat's ground truth per question turn: the instructions in force at that turn (added at it or
 * before, in the order given: the order of the turn's verdicts), as the build verified the turn's
 * answer. A turn with no instruction in force yet has none (nothing to reward).
 */
export function chatTurnTruths(chat: ChatInstructions, vacuous: VacuousPolicy): Array<{ turn: number; truth: GroundTruth }> {
  return chat.turns.flatMap(({ turn }) => {
    const inForce = chat.instructions.filter((i) => i.turn <= turn);
    if (inForce.length === 0) return [];
    const constraints = inForce.map((i) => ruleTruth(i.type, i.value, i.verifiers));
    return [{ turn, truth: { id: chatTurnId(chat.id, turn), image: chat.image_path, vacuous, constraints } }];
  });
}
