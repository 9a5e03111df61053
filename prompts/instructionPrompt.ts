/** Instruction generation for images without a question (paper Fig. 14). */
import { z } from 'zod';
import { rendered, type RenderedPrompt } from './chat.js';

export const instructionReplySchema = z.object({
  instructions: z.array(z.string().min(1)).min(1),
});

/** What fills Fig. 14's {output format}. */
export const OUTPUT_FORMAT = '{"instructions": ["<instruction 1>", "<instruction 2>", "..."]}';

/** `grounding` (e.g. a RICO screen's visible text) is appended so instructions can refer to what the screen shows. */
export function renderInstructionPrompt(examples: readonly string[], grounding?: string): RenderedPrompt {
  const text = `You are an expert in generating concise instructions for images.

## Task
Given the image, generate a list of appropriate instructions for it. Your instructions should not be too long or overly detailed, and they should not include any specific details about the image.

On one hand, you can choose appropriate instructions cases for the provided image from the Examples and modify them naturally for the image.

On the other hand, you can generate new instructions, but only if these new instructions are relevant and appropriate for the image.

## Examples
${examples.map((e, i) => `${i + 1}. ${e}`).join('\n')}

You output format should be in the following format:
${OUTPUT_FORMAT}${grounding ? `\n\n## Text visible in the image\n${grounding}` : ''}`;
  return rendered('instructions', [{ role: 'user', text, withImage: true }]);
}
