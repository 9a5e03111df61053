import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { QuestionPolicy } from '../../config/sourceFields.js';
import { cleanQuestion, cleanQuestionByRules, type QuestionVerdict } from '../../sources/questions.js';

const DROP: QuestionPolicy = { minLength: 8, maxLength: 1000, dropMultipleChoice: true, dropFewShot: true };
const KEEP_STEMS: QuestionPolicy = { ...DROP, dropMultipleChoice: false };

function kept(verdict: QuestionVerdict): string {
  assert.ok(verdict.ok, `expected a kept question, got ${JSON.stringify(verdict)}`);
  return verdict.question;
}

function dropped(verdict: QuestionVerdict): string {
  assert.ok(!verdict.ok, `expected a drop, got ${JSON.stringify(verdict)}`);
  assert.ok(verdict.detail.length > 0);
  return verdict.reason;
}

describe('cleanQuestion', () => {
  it('removes <image> tokens wherever they are, with the spaces and blank lines they leave', () => {
    assert.equal(kept(cleanQuestion('<image>\nWhat is in the picture?', DROP)), 'What is in the picture?');
    assert.equal(kept(cleanQuestion('What is in the picture?\n<image>', DROP)), 'What is in the picture?');
    assert.equal(kept(cleanQuestion('Describe <IMAGE> the scene.\r\n\r\n\r\n\r\nBe brief.', DROP)), 'Describe the scene.\n\nBe brief.');
  });

  it("removes answer-format boilerplate written for the dataset's own training", () => {
    assert.equal(kept(cleanQuestion('<image>\nWhat colour is the car?\nAnswer the question using a single word or phrase.', DROP)), 'What colour is the car?');
    assert.equal(
      kept(cleanQuestion('<image>\nHint: Please answer the question and provide the final answer at the end.\nQuestion: How many people are there?', DROP)),
      'How many people are there?',
    );
  });

  it("removes Vision-FLAN's task framing (ALLaVA vflan questions) and keeps the question", () => {
    assert.equal(
      kept(
        cleanQuestion(
          '<image>\nYou are provided with an image and a question related to the image. Answer the question based on the information given in the image.\n\nWhat is the man holding in his left hand?',
          DROP,
        ),
      ),
      'What is the man holding in his left hand?',
    );
    assert.equal(kept(cleanQuestion('In this task, you are given an image of a street scene. Describe the traffic situation.', DROP)), 'Describe the traffic situation.');
    assert.equal(
      kept(cleanQuestion('Which part of the image are you provided with an image of?', DROP)),
      'Which part of the image are you provided with an image of?',
      'only a framing sentence, not words inside a question',
    );
  });

  it('reduces a Geo170K question to its stem when multiple choice is kept', () => {
    const raw =
      '<image>\nFirst perform reasoning, then finally select the question from the choices in the following format: Answer: xxx.\n' +
      'Question: As shown in the figure, AB is the diameter of circle O, then the degree of angle BOC is ()\nChoices:\nA:30°\nB:45°\nC:60°\nD:90°';
    assert.equal(kept(cleanQuestion(raw, KEEP_STEMS)), 'As shown in the figure, AB is the diameter of circle O, then the degree of angle BOC is');
    assert.equal(dropped(cleanQuestion(raw, DROP)), 'multiple-choice');
  });

  it('recognises the usual ways of offering options', () => {
    const cases = [
      'Which animal is shown?\nOptions: cat, dog, bird',
      'Which animal is shown?\nA. cat\nB. dog\nC. bird',
      'Which animal is shown?\n(A) cat\n(B) dog',
      'Which animal is shown?\na) cat\nb) dog',
      'Which animal is shown? (A) cat (B) dog (C) bird',
      "Which animal is shown?\nA: cat\nB: dog\nAnswer with the option's letter from the given choices directly.",
    ];
    for (const raw of cases) assert.equal(dropped(cleanQuestion(raw, DROP)), 'multiple-choice', raw);
  });

  it('strips every form of options when keeping the stem', () => {
    assert.equal(kept(cleanQuestion('Which animal is shown? (A) cat (B) dog (C) bird', KEEP_STEMS)), 'Which animal is shown?');
    assert.equal(kept(cleanQuestion('Which animal is shown?\n(A) cat\n(B) dog\nExplain briefly.', KEEP_STEMS)), 'Which animal is shown?\nExplain briefly.');
    assert.equal(kept(cleanQuestion('Which animal is shown?\nOptions:\n\nA. cat\nB. dog', KEEP_STEMS)), 'Which animal is shown?');
  });

  it('does not take a sentence that starts with "A." for options', () => {
    assert.equal(kept(cleanQuestion('A. Lincoln signed this document; what is its title?', DROP)), 'A. Lincoln signed this document; what is its title?');
  });

  it('drops prompts that carry worked examples', () => {
    const cases = [
      'Question: Is the sky blue?\nAnswer: yes\nQuestion: What shape is in the corner?',
      'Q: How many cats?\nQ: How many dogs?',
      'Look at the chart.\nAnswer: 42\nNow, what is the lowest value?',
      'Example: "a red car" -> car\nWhat is the main object?',
    ];
    for (const raw of cases) assert.equal(dropped(cleanQuestion(raw, DROP)), 'few-shot', raw);
    assert.equal(kept(cleanQuestion('Q: How many cats?\nQ: How many dogs?', { ...DROP, dropFewShot: false })), 'How many cats?\nQ: How many dogs?');
  });

  it('keeps a trailing "Answer:" cue with nothing after it', () => {
    assert.equal(kept(cleanQuestion('What is the tallest building in the photo?\nAnswer:', DROP)), 'What is the tallest building in the photo?\nAnswer:');
  });

  it('applies the length limits to the cleaned text', () => {
    assert.equal(dropped(cleanQuestion('<image>\nWhy?', DROP)), 'too-short');
    assert.equal(dropped(cleanQuestion('<image>', DROP)), 'too-short');
    assert.equal(kept(cleanQuestion('12345678', DROP)), '12345678');
    const long = `Describe ${'very '.repeat(30)}carefully.`;
    assert.equal(dropped(cleanQuestion(long, { ...DROP, maxLength: 100 })), 'too-long');
    assert.equal(kept(cleanQuestion(long, { ...DROP, maxLength: long.length })), long);
  });
});

describe('cleanQuestion without the rules a question cannot meet', () => {
  // Fragments near every rule: labels, option letters, the boilerplate words, tabs and runs of spaces.
  const FRAGMENTS = [
    'What is shown in chart 12?',
    'Question: how many bars?',
    'Q1:',
    'Examples',
    'Options',
    'Choices',
    'A. cat',
    'B) dog',
    '(A) left (B) right',
    '(a) small',
    'Answer',
    'answer with the given options directly.',
    'First perform reasoning',
    'based on the image, directly select the correct answer for the following question:',
    'hint',
    'You are given an image of a street.',
    '<image>',
    'Output',
    '\t  spaced \t out  ',
    'ok',
    '\u00a0nbsp\u00a0',
    'x'.repeat(990),
  ];
  const texts = FRAGMENTS.flatMap((a) => FRAGMENTS.flatMap((b) => [a, `${a} ${b}`, `${a}${b}`, `${a}\n${b}`, `  ${b}\t${a} `]));

  it('collapses every run of spaces and tabs to one space, as /[ \\t]+/ did, a lone space left as it is', () => {
    for (const text of texts) {
      const verdict = cleanQuestion(text, { ...DROP, minLength: 0, maxLength: 100_000 });
      if (verdict.ok && !/[\n:：]|\(A\)|answer|reasoning|image/i.test(text)) assert.equal(verdict.question, text.replace(/[ \t]+/g, ' ').trim(), JSON.stringify(text));
    }
    assert.equal(kept(cleanQuestion('a \t b\t\tc  d\te f', DROP)), 'a b c d e f');
  });

  it('gives the verdict every rule gives, on texts with and without what the rules look for', () => {
    for (const policy of [DROP, KEEP_STEMS, { ...DROP, minLength: 1, maxLength: 20 }]) {
      for (const text of texts) assert.deepEqual(cleanQuestion(text, policy), cleanQuestionByRules(text, policy), JSON.stringify(text));
    }
  });
});
