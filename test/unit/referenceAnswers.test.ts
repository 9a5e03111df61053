import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { QuestionPolicy } from '../../config/sourceFields.js';
import { cleanQuestion } from '../../sources/questions.js';
import { chartLabel, optionTexts, withoutBoxes, withoutOptionLetters } from '../../sources/referenceAnswers.js';

const GEO_POLICY: QuestionPolicy = { minLength: 4, maxLength: 1000, dropMultipleChoice: false, dropFewShot: true };

/**
 * Geo170K `qa_tuning.json` records as released (Luckyjhg/Geo170K), quoted verbatim in the README of
 * HJYao00/Mulberry (its Geo170K examples): the "First perform reasoning..." form with a worked
 * answer ending `Answer:C`, and the "Based on the image, directly select..." form answered `Answer:B`.
 */
const GEO_REASONING = {
  human:
    '<image>\nFirst perform reasoning, then finally select the question from the choices in the following format: Answer: xxx.\n' +
    'Question: In the provided diagram, it is known that line l intersects lines a and b at points A and B respectively, and line a is parallel to line b. ' +
    'Additionally, the perpendicular line passing through point A intersects line b at point C. If angle 1 measures 32\u00b0, what is the degree measure of angle 2?\n' +
    'Choices:\nA: 32\u00b0\nB: 68\u00b0\nC: 58\u00b0\nD: 34\u00b0',
  gpt:
    'Since line a || b, therefore angle 2 + angle BAC + angle 1 = 180\u00b0. Since AC perpendicular  BA, therefore angle BAC = 90\u00b0. ' +
    'Therefore, angle 2 = 180\u00b0 - angle 1 - angle BAC = 180\u00b0 - 90\u00b0 - 32\u00b0 = 58\u00b0. Therefore, the answer is: C.\nAnswer:C',
};
const GEO_DIRECT = {
  human: '<image>\nBased on the image, directly select the correct answer for the following question:\nQuestion: Find x.\nChoices:\nA: 30\nB: 45\nC: 60\nD: 90',
  gpt: 'Answer:B',
};

describe('Geo170K questions and reference answers', () => {
  it('strips every preamble form of the release and the choices, keeping the stem', () => {
    const reasoning = cleanQuestion(GEO_REASONING.human, GEO_POLICY);
    assert.ok(reasoning.ok);
    assert.match(reasoning.question, /^In the provided diagram, .* what is the degree measure of angle 2\?$/s);
    const direct = cleanQuestion(GEO_DIRECT.human, GEO_POLICY);
    assert.deepEqual(direct, { ok: true, question: 'Find x.' });
    const pleaseForm = cleanQuestion(
      '<image>\nAccording to the question shown in the image, please first perform reasoning, then finally select the right answer from the choices, e.g., Answer: xxx.\nQuestion: What is the length of AB?\nChoices:\nA:2\nB:4',
      GEO_POLICY,
    );
    assert.deepEqual(pleaseForm, { ok: true, question: 'What is the length of AB?' });
  });

  it('reads the option texts the question offered', () => {
    assert.deepEqual(
      [...optionTexts(GEO_REASONING.human)],
      [
        ['A', '32\u00b0'],
        ['B', '68\u00b0'],
        ['C', '58\u00b0'],
        ['D', '34\u00b0'],
      ],
    );
  });

  it('rewrites option letters in the answer to the option texts', () => {
    assert.equal(
      withoutOptionLetters(GEO_REASONING.gpt, optionTexts(GEO_REASONING.human)),
      'Since line a || b, therefore angle 2 + angle BAC + angle 1 = 180\u00b0. Since AC perpendicular  BA, therefore angle BAC = 90\u00b0. ' +
        'Therefore, angle 2 = 180\u00b0 - angle 1 - angle BAC = 180\u00b0 - 90\u00b0 - 32\u00b0 = 58\u00b0. Therefore, the answer is 58\u00b0.',
    );
    assert.equal(withoutOptionLetters(GEO_DIRECT.gpt, optionTexts(GEO_DIRECT.human)), '45');
  });

  it('drops a letter no option explains, and leaves prose that names no option alone', () => {
    assert.equal(withoutOptionLetters('Angle 2 is 58\u00b0. Therefore, the answer is: C.\nAnswer:C', new Map()), 'Angle 2 is 58\u00b0.');
    assert.equal(withoutOptionLetters('Answer:B', new Map()), undefined);
    assert.equal(withoutOptionLetters('So the answer is a right angle.', new Map()), 'So the answer is a right angle.');
  });
});

describe('MultiUI webqa reference answers', () => {
  it('removes [x1, y1, x2, y2] element boxes and the gap they leave', () => {
    assert.equal(withoutBoxes('The cheapest plan is Basic [112, 640, 398, 702] at $9 per month.'), 'The cheapest plan is Basic at $9 per month.');
    assert.equal(withoutBoxes('Click "Sign up" ([0.12, 0.3, 0.25, 0.34]).'), 'Click "Sign up".');
    assert.equal(withoutBoxes('[10, 20, 30, 40]'), undefined);
    assert.equal(withoutBoxes('Scores were [4, 9] in the two rounds.'), 'Scores were [4, 9] in the two rounds.', 'a two-number list is not a box');
  });
});

describe('ChartQA labels', () => {
  it('rewrites a spreadsheet date serial when the question asks for a date', () => {
    assert.deepEqual(chartLabel('44362', 'In which date was the number of cases the highest?'), { ok: true, answer: '2021-06-15', normalised: 'spreadsheet-serial' });
    assert.deepEqual(chartLabel('44362', 'How many units were sold in total?'), { ok: true, answer: '44362' }, 'a count stays a count');
  });

  it('rewrites list strings, JSON or Python-quoted, and refuses one that does not parse', () => {
    assert.deepEqual(chartLabel('[4, 9]', 'Which two years have the same value?'), { ok: true, answer: '4, 9', normalised: 'list' });
    assert.deepEqual(chartLabel("['Italy', 'Spain']", 'Which countries exceed 20?'), { ok: true, answer: 'Italy, Spain', normalised: 'list' });
    const broken = chartLabel('[4, 9', 'x');
    assert.deepEqual(broken, { ok: true, answer: '[4, 9' }, 'not bracketed on both ends: an ordinary label');
    const unreadable = chartLabel('[Italy, Spain]', 'Which countries exceed 20?');
    assert.ok(!unreadable.ok);
    assert.equal(unreadable.filter, 'label-unreadable');
    assert.match(unreadable.detail, /label "\[Italy, Spain\]" looks like a list but does not parse/);
  });
});
