/**
 * The compatibility pass: a second model call that removes constraints conflicting with the
 * instruction or with each other, applying the rules of Fig. 15 to the finished list.
 */
import { z } from 'zod';
import type { Constraint } from '../domain/constraints/selection.js';
import { rendered, type RenderedPrompt } from './chat.js';

export const compatibilityReplySchema = z.object({
  keep: z.array(z.number().int()),
  dropped: z.array(z.object({ index: z.number().int(), reason: z.string() })),
});
export type CompatibilityReply = z.infer<typeof compatibilityReplySchema>;

export function renderCompatibilityPrompt(instruction: string, constraints: readonly Constraint[]): RenderedPrompt {
  const text = `You are checking a list of constraints for conflicts.

## Instruction
${instruction}

## Constraints
${constraints.map((c, i) => `${i + 1}. [${c.type}] ${c.value}`).join('\n')}

## Task
Remove every constraint that:
1. conflicts with the instruction (for example, a paragraph count on a question answered in one word, or a second-person perspective on "What is the object in the image?");
2. conflicts with another constraint (for example, two different paragraph counts, or a decimal precision together with "use no numbers"); when two conflict, remove the less important one;
3. is irrelevant to the instruction's theme.
Keep all the others. Every constraint number must appear exactly once, in "keep" or in "dropped".

## Output Format
{"keep": [<numbers of the constraints to keep>], "dropped": [{"index": <number>, "reason": "<short reason>"}]}`;
  return rendered('compatibility', [{ role: 'user', text }]);
}
