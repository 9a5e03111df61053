/**
 * Instruction refinement for sources that come with questions (ALLaVA, ChartQA, Geo170k, MultiUI):
 * the main task is extracted from the dataset's question and made open enough to carry
 * constraints, as the paper does before constraint integration.
 */
import { z } from 'zod';
import { rendered, type RenderedPrompt } from './chat.js';

export const refineReplySchema = z.object({ instruction: z.string().min(1) });

/** Heads the dataset's question (the simulator's refinement reply reads the question under it). */
export const REFINE_HEADINGS = { question: '## Original question' } as const;

export function renderRefinePrompt(question: string, reference?: { answer?: string; grounding?: string }): RenderedPrompt {
  const context = [
    reference?.answer ? `## Reference answer to the original question\n${reference.answer}` : '',
    reference?.grounding ? `## Data shown in the image\n${reference.grounding}` : '',
  ].filter(Boolean);
  const text = `You are an expert in writing instructions for images.

## Task
Below is a question that a dataset asks about the image. Rewrite it as one clear instruction for the image:
1. Keep its main task and subject; drop answer options, examples and formatting boilerplate.
2. If it is a short factoid question (a single number, word or yes/no), turn it into an open task that asks for the answer together with an explanation, comparison or analysis, so the response can be several sentences long.
3. Do not answer it, and do not add details that are not in the question or visible in the image.

${REFINE_HEADINGS.question}
${question}
${context.length ? `\n${context.join('\n\n')}\n` : ''}
## Output Format
{"instruction": "<the refined instruction>"}`;
  return rendered('refined_instruction', [{ role: 'user', text, withImage: true }]);
}
