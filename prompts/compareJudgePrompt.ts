/**
 * The compare judge (paper Fig. 21): text only, one call per constraint, against an answer made without it.
 * Fig. 21 asks for "only True or False, no additional text"; the reference parser reads the first
 * True/False after the last "Summary" (verification/judgeReplies.ts). The response format asks for
 * exactly that, once: the verdict word on a single `Summary:` line and nothing else.
 */
import { rendered, type RenderedPrompt } from './chat.js';

/** The labels the two responses follow, and the line that ends them (the simulator finds the responses by them). */
export const COMPARE_JUDGE_LABELS = {
  withConstraint: 'Response under the constraint:',
  withoutConstraint: 'Response without the constraint:',
  steps: '**Please follow the steps below to evaluate**:',
} as const;

export function renderCompareJudgePrompt(constraint: string, withConstraint: string, withoutConstraint: string): RenderedPrompt {
  const text = `You are an expert in judging whether the response follow the given constraint. Your task is to assess whether the model's response satisfies the given constraint and return True or False. I will provide you with the constraint and the model's response under this constraint. To assist with your evaluation, I will also provide you with the model's response to the same question without the constraint.

Constraint: ${constraint}

${COMPARE_JUDGE_LABELS.withConstraint} ${withConstraint}

${COMPARE_JUDGE_LABELS.withoutConstraint} ${withoutConstraint}

${COMPARE_JUDGE_LABELS.steps}

Step 1. Compare the model's response under the constraint with its response without the constraint. If you believe these two answers are very similar, it means the model has not fully considered the impact of the constraint on the answer. Please return False.

Step 2. Compare the model's response under the constraint with the content of the constraint. If you believe the model's response does not meet the requirements specified in the constraint, return False. Otherwise, if the response effectively satisfies the constraint, return True.

**Response Format**: Your answer should be exactly one line, "Summary: True" or "Summary: False", and no additional text.`;
  return rendered('compare_judge', [{ role: 'user', text }]);
}
