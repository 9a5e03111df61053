/** The answering prompt of the reference implementation (shared NOTES §4), used for chosen and rejected answers. */
import type { Constraint } from '../domain/constraints/selection.js';
import type { RenderedPrompt } from './chat.js';

export const ANSWER_PROMPT_VERSION = 'answer-v1';

export function answerPromptText(instruction: string, constraints: readonly Constraint[]): string {
  if (constraints.length === 0) return `## Task Description\n${instruction}`;
  const list = constraints.map((c, i) => `${i + 1}. ${c.value}`).join('\n');
  return `## Task Description\n${instruction}\n\n## Constraints\nYou must strictly follow the constraints below:\n${list}`;
}

export function renderAnswerPrompt(instruction: string, constraints: readonly Constraint[]): RenderedPrompt {
  return {
    version: ANSWER_PROMPT_VERSION,
    messages: [{ role: 'user', text: answerPromptText(instruction, constraints), withImage: true }],
  };
}
