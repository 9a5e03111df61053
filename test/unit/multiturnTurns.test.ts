/**
 * One turn of a multi-turn chat: the context the model answers (prompts/multiturnChat.ts), its PIF over
 * every instruction in force with the real verifiers, and the turn-level pair rules
 * (pipeline/stages/chat/turnScore.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { instructionsInForce, type ChatInstruction } from '../../domain/multiturn/chatPlan.js';
import { MULTITURN_SYSTEM_TEXT, renderChatTurn, type ChatTurn } from '../../prompts/multiturnChat.js';
import { chatMessages } from '../../llm/chatMessages.js';
import { judgeTurnPair, scoreTurn } from '../../pipeline/stages/chat/turnScore.js';
import type { PlannedConstraint } from '../../pipeline/run/stageState.js';

const exclaim: PlannedConstraint = {
  type: 'punctuation_requirements',
  value: 'From now on, end every sentence with an exclamation mark.',
  method: 'rule',
  verifiers: [{ func: 'check_whether_each_sentence_end_with_certain_substring', params: ['!'] }],
  selection: 'parser',
};
const short: PlannedConstraint = {
  type: 'word_count_range_limit',
  value: 'From now on, use at most 12 words.',
  method: 'rule',
  verifiers: [{ func: 'check_whether_response_word_count_in_range', params: [1, 12] }],
  selection: 'parser',
};
const plan: Array<ChatInstruction<PlannedConstraint>> = [
  { turn: 1, constraint: exclaim },
  { turn: 2, constraint: short },
];
const chat: ChatTurn[] = [
  { question: 'What animal is in the picture?', instruction: exclaim, answer: 'A dog!' },
  { question: 'What is it doing?', instruction: short, answer: 'It is running on grass!' },
  { question: 'How does it look?' },
];

test('the context: image on the first question, instructions where they were given, earlier answers', () => {
  const later = [
    { role: 'assistant', text: 'A dog!' },
    { role: 'user', text: `${short.value}\n\nWhat is it doing?` },
    { role: 'assistant', text: 'It is running on grass!' },
    { role: 'user', text: 'How does it look?' },
  ];
  const first = { role: 'user', text: `${exclaim.value}\n\nWhat animal is in the picture?`, withImage: true };
  // The chat's rule goes after the image in its message, so the chat opens with the image like every other stage of the sample.
  const prompt = renderChatTurn(chat, 2);
  assert.deepEqual(prompt.messages, [{ ...first, preface: MULTITURN_SYSTEM_TEXT }, ...later]);
  const [opening] = chatMessages(prompt, { jpeg: Buffer.from('jpeg'), sha256: 'x' }, 'low');
  assert.deepEqual(
    (opening!.content as Array<{ type: string; text?: string }>).map((part) => part.text ?? part.type),
    ['image_url', MULTITURN_SYSTEM_TEXT, first.text],
  );
});

test('the rejected context forgets one earlier instruction; the ablation appends all at the end', () => {
  const forgetting = renderChatTurn(chat, 2, { forget: 0 });
  assert.equal(forgetting.messages[0]?.text, 'What animal is in the picture?');
  assert.equal(forgetting.messages[2]?.text, `${short.value}\n\nWhat is it doing?`);
  assert.ok(!forgetting.messages.some((m) => m.text.includes(exclaim.value)));

  const appended = renderChatTurn(chat, 2, { appendAll: true });
  assert.equal(appended.messages.at(-1)?.text, `How does it look?\n\nFollow all of these instructions in your answer:\n1. ${exclaim.value}\n2. ${short.value}`);
  assert.notEqual(appended.version, renderChatTurn(chat, 2).version, 'the ablation never shares a cache key with the plain chat');

  assert.throws(() => renderChatTurn(chat, 2, { forget: 2 }), /turn 3 adds no instruction before turn 3/);
  assert.throws(() => renderChatTurn([{ question: 'q1' }, { question: 'q2' }], 1), /turn 1 has no answer/);
});

test('PIF at a turn counts every instruction in force, with the real verifiers', () => {
  const inForce = instructionsInForce(plan, 3);
  const both = scoreTurn('The dog looks happy! Its tail is up!', inForce, 'pass');
  assert.equal(both.pif, 1);
  const forgotFirst = scoreTurn('The dog looks happy. Its tail is up.', inForce, 'pass');
  assert.equal(forgotFirst.pif, 0.5);
  assert.deepEqual(
    forgotFirst.verdicts.map((v) => [v.index, v.type, v.passed]),
    [
      [0, 'punctuation_requirements', false],
      [1, 'word_count_range_limit', true],
    ],
  );
  assert.equal(scoreTurn('Anything.', instructionsInForce(plan, 0), 'pass').pif, 1, 'seed 002 Fig. 5: PIF defaults to 1 before any instruction');
});

test('turn-level pairs: kept only when the rejected answer fails the forgotten instruction and the chosen one loses nowhere', () => {
  const inForce = instructionsInForce(plan, 3);
  const chosen = scoreTurn('The dog looks happy! Its tail is up!', inForce, 'pass');
  assert.deepEqual(judgeTurnPair(chosen, scoreTurn('The dog looks happy. Its tail is up.', inForce, 'pass'), 0, 'pass'), { kept: true });

  // The rejected answer followed the forgotten instruction anyway: nothing to teach.
  const lucky = judgeTurnPair(chosen, scoreTurn('It looks happy!', inForce, 'pass'), 0, 'pass');
  assert.equal(!lucky.kept && lucky.rule, 'uninformative-pair');

  // The chosen answer breaks the word limit that the rejected answer keeps: the pair would teach the opposite.
  const verbose = scoreTurn('The dog looks very happy in the bright afternoon sun! Its fluffy tail is raised high above its back!', inForce, 'pass');
  assert.equal(verbose.pif, 0.5);
  const losing = judgeTurnPair(verbose, scoreTurn('The dog looks happy. Its tail is up.', inForce, 'pass'), 0, 'pass');
  assert.equal(!losing.kept && losing.rule, 'chosen-loses');
  assert.match(!losing.kept ? losing.detail : '', /#2 word_count_range_limit/);
});
