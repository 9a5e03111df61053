/**
 * The simulator reads the judge, verifier-selection, answer, refinement, constraint-offer and chat
 * questions prompts by the labels the
 * prompt modules export (simulator/promptSections.ts), so a reworded label cannot silently break the
 * simulated replies: each prompt is rendered by the real renderer, with its labels as written and
 * reworded, and read back by the simulator's parser.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ANSWER_HEADINGS, answerPromptText } from '../../prompts/answerPrompt.js';
import { CHAT_QUESTIONS_LABELS, renderChatQuestionsPrompt } from '../../prompts/chatQuestionsPrompt.js';
import { COMPARE_JUDGE_LABELS, renderCompareJudgePrompt } from '../../prompts/compareJudgePrompt.js';
import { CONSTRAINT_LINE_LABELS, renderConstraintPrompt } from '../../prompts/constraintPrompt.js';
import { DIRECT_JUDGE_MARKERS, renderDirectJudgePrompt } from '../../prompts/directJudgePrompt.js';
import { REFINE_HEADINGS, renderRefinePrompt } from '../../prompts/refinePrompt.js';
import { renderVerifierSelectionPrompt, VERIFIER_SELECTION_LABELS } from '../../prompts/verifierSelectionPrompt.js';
import type { RenderedPrompt } from '../../prompts/chat.js';
import { parseAnswerPrompt } from '../../simulator/answers.js';
import { parseCompareJudgePrompt, parseDirectJudgePrompt, parseVerifierSelectionPrompt } from '../../simulator/judges.js';
import { HttpError } from '../../simulator/http.js';
import { ChatRequestSchema, generateReply, parseOfferedConstraints } from '../../simulator/replies.js';
import { CONSTRAINT_TYPES } from '../../domain/constraints/catalogue.js';

const textOf = (prompt: RenderedPrompt) => prompt.messages.map((m) => m.text).join('\n');
const replyTo = (prompt: RenderedPrompt) =>
  generateReply(ChatRequestSchema.parse({ model: 'sim-vl', messages: [{ role: 'user', content: textOf(prompt) }] }), 1, undefined, undefined, prompt.kind).content;

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
    const { instruction } = JSON.parse(replyTo(renderRefinePrompt('How many bars are red?', { answer: '4' }))) as { instruction: string };
    assert.match(instruction, /^How many bars are red\? Explain/);
  });
});

test('the simulated constraint stage reads each offered type with its example', () => {
  asWrittenAndReworded(CONSTRAINT_LINE_LABELS, () => {
    const offered = CONSTRAINT_TYPES.slice(0, 3);
    const read = parseOfferedConstraints(textOf(renderConstraintPrompt('Describe the chart.', offered)));
    assert.deepEqual(
      read.map((c) => [c.key, c.description, c.example]),
      offered.map((c) => [c.key, `${c.description} ${c.guidance}`, c.examples[0]]),
    );
  });
});

test('the simulated chat questions come in the number asked for', () => {
  asWrittenAndReworded(CHAT_QUESTIONS_LABELS, () => {
    const { questions } = JSON.parse(replyTo(renderChatQuestionsPrompt(3))) as { questions: string[] };
    assert.equal(questions.length, 3);
  });
});

test('a prompt missing a label the simulator reads is refused with a 400 naming the label and the kind, not answered from an empty section', () => {
  const missing = (label: string, kind: string) => (err: unknown) =>
    err instanceof HttpError && err.status === 400 && err.message.includes(JSON.stringify(label)) && err.message.includes(`The ${kind} prompt`);
  const without = (prompt: RenderedPrompt, label: string): RenderedPrompt => ({ ...prompt, messages: prompt.messages.map((m) => ({ ...m, text: m.text.replace(label, '') })) });
  const cases: Array<[RenderedPrompt, string]> = [
    [renderDirectJudgePrompt('A reply.', ['Use 3 bullets.']), DIRECT_JUDGE_MARKERS.responseEnd],
    [renderDirectJudgePrompt('A reply.', ['Use 3 bullets.']), DIRECT_JUDGE_MARKERS.listStart],
    [renderCompareJudgePrompt('Use 3 bullets.', '- a', 'Plain.'), COMPARE_JUDGE_LABELS.steps],
    [renderVerifierSelectionPrompt('Answer in 3 words.', [{ name: 'check_word_count', signature: 'response, range', example: '[3, 3]' }]), VERIFIER_SELECTION_LABELS.functions],
    [renderRefinePrompt('How many bars?'), REFINE_HEADINGS.question],
    [renderChatQuestionsPrompt(3), CHAT_QUESTIONS_LABELS.count],
  ];
  for (const [prompt, label] of cases) assert.throws(() => replyTo(without(prompt, label)), missing(label, prompt.kind), `${prompt.kind} without ${label}`);
});
