import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCompareJudge, parseDirectJudge } from '../../verification/judgeReplies.js';

test('direct judge: the reference format', () => {
  const reply = 'Judgement: ...\nSummary: Score of constraint_1: 1/1, Score of constraint_2: 0/1, Score of constraint_3: 1/1.';
  assert.deepEqual(parseDirectJudge(reply, 3), [true, false, true]);
});

test('direct judge: bold markers, odd spacing, case and "=" are tolerated; the summary wins over the reasoning', () => {
  const reply = [
    'Judgement: Score of constraint_2: 1/1 at first sight, but the list is unnumbered.',
    '**Summary:** **Score of Constraint_1 : 1 / 1**, score of constraint 2: 0/1, SCORE OF CONSTRAINT_3=1/1',
  ].join('\n');
  assert.deepEqual(parseDirectJudge(reply, 3), [true, false, true]);
});

test('direct judge: a missing score is undefined, out-of-range indices are ignored, partial scores fail', () => {
  assert.deepEqual(parseDirectJudge('Summary: Score of constraint_1: 1/1, Score of constraint_7: 1/1', 3), [true, undefined, undefined]);
  assert.deepEqual(parseDirectJudge('Summary: Score of constraint_1: 0.5/1', 1), [false]);
  assert.deepEqual(parseDirectJudge('I cannot judge this.', 2), [undefined, undefined]);
});

test('compare judge: first True/False after the last summary', () => {
  assert.equal(parseCompareJudge('The response is True to the tone.\nSummary: "False"'), false);
  assert.equal(parseCompareJudge('Summary: maybe. Final summary: **True**'), true);
  assert.equal(parseCompareJudge('True'), true);
  assert.equal(parseCompareJudge('Summary: the answers are similar.'), undefined);
  assert.equal(parseCompareJudge('nothing useful'), undefined);
});
