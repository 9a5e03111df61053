/**
 * Verifier selection and parameter extraction (paper Fig. 20): the fallback for constraints the
 * deterministic parser does not recognise. The reply is validated against the registry afterwards.
 */
import { z } from 'zod';
import { rendered, type RenderedPrompt } from './chat.js';

export const verifierSelectionReplySchema = z.object({
  /** Empty when no function fits. */
  calls: z.array(z.object({ func: z.string(), params: z.array(z.unknown()) })),
});
export type VerifierSelectionReply = z.infer<typeof verifierSelectionReplySchema>;

export interface FunctionDescription {
  name: string;
  signature: string;
  example: string;
}

/** What fills Fig. 20's {output format}; the sentence after it is a listed change (prompts/departures.ts). */
export const OUTPUT_FORMAT = '{"calls": [{"func": "<function name>", "params": [<positional parameters>]}]}';

/** The label of the constraint and the heading of the offered functions (the simulator reads both by them). */
export const VERIFIER_SELECTION_LABELS = {
  constraint: 'Constraint content:',
  functions: 'Available verification functions:',
} as const;

export function renderVerifierSelectionPrompt(constraint: string, functions: readonly FunctionDescription[]): RenderedPrompt {
  const list = functions.map((f) => `- ${f.name}(${f.signature}) e.g. ${f.example}`).join('\n');
  const text = `Please analyze the following constraint and select the most appropriate function from the given list to verify this constraint. Then extract the required parameters for the verification function from the constraint.

${VERIFIER_SELECTION_LABELS.constraint} ${constraint}

${VERIFIER_SELECTION_LABELS.functions}
${list}

Please complete the analysis following these steps:

**Your task:**
1. Select the most appropriate verification function from the above list (return empty if none is suitable)
2. Extract the required parameters from the constraint based on the function description

**Please return the result in JSON format as follows:**
${OUTPUT_FORMAT}
Use "calls": [] when no function fits. "At least 3" is [3, 10000]; "less than 3" is [0, 2]; a list parameter is one JSON array.`;
  return rendered('verifier_selection', [{ role: 'user', text }]);
}
