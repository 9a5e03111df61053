/**
 * The simulator reads the judge, verifier-selection, answer and refinement prompts by the labels the
 * prompt modules export (simulator/promptSections.ts), so a reworded label cannot silently break the
 * simulated replies: each prompt is rendered by the real renderer, with its labels as written and
 * reworded, and read back by the simulator's parser.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ANSWER_HEADINGS, answerPromptText } from '../../prompts/answerPrompt.js';
import { COMPARE_JUDGE_LABELS, renderCompareJudgePrompt } from '../../prompts/compareJudgePrompt.js';
import { DIRECT_JUDGE_MARKERS, renderDirectJudgePrompt } from '../../prompts/directJudgePrompt.js';
import { REFINE_HEADINGS, renderRefinePrompt } from '../../prompts/refinePrompt.js';
import { renderVerifierSelectionPrompt, VERIFIER_SELECTION_LABELS } from '../../prompts/verifierSelectionPrompt.js';
import type { RenderedPrompt } from '../../prompts/chat.js';
import { parseAnswerPrompt } from '../../simulator/answers.js';
import { parseCompareJudgePrompt, parseDirectJudgePrompt, parseVerifierSelectionPrompt } from '../../simulator/judges.js';
import { ChatRequestSchema, generateReply } from '../../simulator/replies.js';

const textOf = (prompt: RenderedPrompt) => prompt.messages.map((m) => m.text).join('\n');

/** Runs `body` with every label of `labels` reworded (as a prompt edit would), then restores them. */
function reworded(labels: Record<string, string>, body: () => void): void {
  const written = { ...labels };
  for (const key of Object.keys(labels)) labels[key] = `${written[key]!.replace(/:$/, '')} (reworded):`;
  try {
    body();
  } finally {
    Object.assign(labels, written);
  }
}

/** Each check, once with the labels as written and once reworded. */
function asWrittenAndReworded(labels: object, check: () => void): void {
  check();
  reworded(labels as Record<string, string>, check);
}

test('the simulated direct judge reads the response and every constraint', () => {
  asWrittenAndReworded(DIRECT_JUDGE_MARKERS, () => {
    const text = textOf(renderDirectJudgePrompt('First line.\nSecond line.', ['Use 3 bullets.', 'End with a question.']));
    assert.deepEqual(parseDirectJudgePrompt(text), { response: 'First line.\nSecond line.', constraints: ['Use 3 bullets.', 'End with a question.'] });
  });
});

test('the simulated compare judge reads both responses', () => {
  asWrittenAndReworded(COMPARE_JUDGE_LABELS, () => {
    const text = textOf(renderCompareJudgePrompt('Use 3 bullets.', '- a\n- b\n- c', 'Plain prose.'));
    assert.deepEqual(parseCompareJudgePrompt(text), { withConstraint: '- a\n- b\n- c', withoutConstraint: 'Plain prose.' });
  });
});

test('the simulated verifier selection reads the constraint and only the offered functions', () => {
  asWrittenAndReworded(VERIFIER_SELECTION_LABELS, () => {
    const functions = [
      { name: 'check_word_count', signature: 'response, range', example: '[3, 10]' },
      { name: 'check_bullets', signature: 'response, n', example: '3' },
    ];
    const text = textOf(renderVerifierSelectionPrompt('Answer in at least 3 words.', functions));
    assert.deepEqual(parseVerifierSelectionPrompt(text), { constraint: 'Answer in at least 3 words.', functions: ['check_word_count', 'check_bullets'] });
  });
});

test('the simulated answer reads the task and the numbered constraints', () => {
  asWrittenAndReworded(ANSWER_HEADINGS, () => {
    const text = answerPromptText('Describe the chart.', [{ type: 'word_count', value: 'Answer in at most 50 words.' }]);
    assert.deepEqual(parseAnswerPrompt(text), { instruction: 'Describe the chart.', constraints: ['Answer in at most 50 words.'] });
  });
});

test('the simulated refinement asks the original question', () => {
  asWrittenAndReworded(REFINE_HEADINGS, () => {
    const prompt = renderRefinePrompt('How many bars are red?', { answer: '4' });
    const request = ChatRequestSchema.parse({ model: 'sim-vl', messages: [{ role: 'user', content: textOf(prompt) }] });
    const { instruction } = JSON.parse(generateReply(request, 1, undefined, undefined, prompt.kind).content) as { instruction: string };
    assert.match(instruction, /^How many bars are red\? Explain/);
  });
});
