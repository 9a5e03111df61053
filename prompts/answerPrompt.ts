/** The answering prompt of the reference implementation (shared NOTES §4), used for chosen and rejected answers. */
import type { Constraint } from '../domain/constraints/selection.js';
import { referenceFrame } from './departures.js';
import { rendered, framed, type RenderedPrompt } from './chat.js';

/** The numbered form's two section headings (the simulator finds the task and the constraints by them). */
export const ANSWER_HEADINGS = { task: '## Task Description', constraints: '## Constraints' } as const;

export function answerPromptText(instruction: string, constraints: readonly Constraint[]): string {
  if (constraints.length === 0) return `${ANSWER_HEADINGS.task}\n${instruction}`;
  const list = constraints.map((c, i) => `${i + 1}. ${c.value}`).join('\n');
  return `${ANSWER_HEADINGS.task}\n${instruction}\n\n${ANSWER_HEADINGS.constraints}\nYou must strictly follow the constraints below:\n${list}`;
}

/**
 * `reference` (a dataset's own answer, e.g. a ChartQA label) frames the prompt (the image message's
 * preface, prompts/chat.ts): it helps the model get the facts right but is not part of the prompt
 * stored in the training record.
 */
export function renderAnswerPrompt(instruction: string, constraints: readonly Constraint[], reference?: string): RenderedPrompt {
  const user = { role: 'user' as const, text: answerPromptText(instruction, constraints), withImage: true };
  return rendered('answer', reference ? framed(referenceFrame(reference), user) : [user]);
}
