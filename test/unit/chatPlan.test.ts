/** The seeded shape of a multi-turn chat (domain/multiturn/chatPlan.ts) over catalogue types and real verifier calls. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rngFor } from '../../domain/random.js';
import { assignInstructions, droppedForRejected, instructionsInForce, instructionTurns, type ChatCandidate } from '../../domain/multiturn/chatPlan.js';

test('instruction turns follow seed 002 §1: before question j, add one with probability 1 − (given so far)/max', () => {
  const counts = new Set<number>();
  for (let seed = 0; seed < 300; seed++) {
    const turns = instructionTurns(rngFor('chat', seed), 3, 6);
    counts.add(turns.length);
    assert.equal(turns[0], 1, 'with none given, the chance is 1 − 0/6 = 1: the first question always gets one');
    assert.ok(
      turns.every((t, i) => t >= 1 && t <= 3 && (i === 0 || t > turns[i - 1]!)),
      `seed ${seed}: ${turns}`,
    );
  }
  assert.deepEqual([...counts].sort(), [1, 2, 3], 'a 3-turn chat gets 1, 2 or 3 instructions, never more');
  for (let seed = 0; seed < 300; seed++) assert.ok(instructionTurns(rngFor('chat', seed), 20, 6).length <= 6);
  // max 1: after the first, the chance is 1 − 1/1 = 0.
  for (let seed = 0; seed < 50; seed++) assert.deepEqual(instructionTurns(rngFor('one', seed), 20, 1), [1]);
  // The chance at turn 2 after one instruction is 1 − 1/6 = 5/6; at turn 3 after two, 4/6.
  const runs = 6000;
  let second = 0;
  let thirdAfterTwo = 0;
  let twoGiven = 0;
  for (let seed = 0; seed < runs; seed++) {
    const turns = instructionTurns(rngFor('freq', seed), 3, 6);
    if (turns.includes(2)) second++;
    if (turns.includes(2)) {
      twoGiven++;
      if (turns.includes(3)) thirdAfterTwo++;
    }
  }
  assert.ok(Math.abs(second / runs - 5 / 6) < 0.02, `turn 2: ${second / runs}`);
  assert.ok(Math.abs(thirdAfterTwo / twoGiven - 4 / 6) < 0.03, `turn 3 after two: ${thirdAfterTwo / twoGiven}`);
  // §2.1 also says "most chats will receive 6 instructions between turns 6 and 10", which §1's formula
  // does not give (the 6th comes after 1 + 6/5 + 6/4 + 6/3 + 6/2 + 6/1 = 14.7 questions on average);
  // the formula is the explicit statement, so it is the one matched: mean 6th turn ≈ 14.7 when reached.
  const sixth = Array.from({ length: 4000 }, (_, seed) => instructionTurns(rngFor('sixth', seed), 20, 6)[5]).filter((t) => t !== undefined);
  const meanSixth = sixth.reduce((a, t) => a + t!, 0) / sixth.length;
  assert.ok(meanSixth > 12 && meanSixth < 14.7, `mean turn of a 6th instruction reached by turn 20: ${meanSixth}`);
  assert.deepEqual(instructionTurns(rngFor('s', 'img-1'), 20, 6), instructionTurns(rngFor('s', 'img-1'), 20, 6));
  assert.throws(() => instructionTurns(rngFor('x'), 21, 6), /turns must be an integer in 1..20, got 21/);
  assert.throws(() => instructionTurns(rngFor('x'), 10, 7), /instructions per chat must be an integer in 1..6, got 7/);
});

const rule = (type: string, value: string, func: string, params: unknown[]): ChatCandidate => ({ type, value, method: 'rule', verifiers: [{ func, params }] });

test('assignment: judged and repeated types refused, conflicts removed across the whole chat, earliest turns first', () => {
  const oneParagraph = rule('paragraph_number_limit', 'Answer in one paragraph.', 'check_whether_response_paragraph_number_in_range', [1, 1]);
  const tone: ChatCandidate = { type: 'tone_requirement', value: 'Sound excited.', method: 'compare_judge', verifiers: [] };
  const exclaim = rule('punctuation_requirements', 'End every sentence with "!".', 'check_whether_each_sentence_end_with_certain_substring', ['!']);
  // The catalogue declares punctuation_requirements and sentence_number_limit incompatible.
  const threeSentences = rule('sentence_number_limit', 'Use exactly 3 sentences.', 'check_whether_response_sentence_number_in_range', [3, 3]);
  const shortAnswer = rule('word_count_range_limit', 'Use at most 60 words.', 'check_whether_response_word_count_in_range', [1, 60]);
  const twoParagraphs = rule('paragraph_number_limit', 'Answer in two paragraphs.', 'check_whether_response_paragraph_number_in_range', [2, 2]);
  const sayCat = rule('mention', 'Mention "cat".', 'check_whether_each_keyword_in_list_mentioned_in_range', [['cat'], 1, 10000]);
  // Forbids what the previous one requires: a conflict between their verifier calls.
  const noCat = rule('not_mention', 'Never write "cat".', 'check_whether_whole_response_not_contain_certain_substrings', [['cat']]);

  const plan = assignInstructions([2, 5, 9], [oneParagraph, tone, exclaim, threeSentences, shortAnswer, twoParagraphs, sayCat, noCat]);
  assert.deepEqual(
    plan.instructions.map((i) => [i.turn, i.constraint.type]),
    [
      [2, 'paragraph_number_limit'],
      [5, 'punctuation_requirements'],
      [9, 'word_count_range_limit'],
    ],
  );
  assert.deepEqual(
    plan.spare.map((c) => c.type),
    ['mention'],
  );
  const reasons = plan.removed.map((r) => `${r.constraint.value} -> ${r.reason}`);
  assert.equal(reasons.length, 4);
  assert.match(reasons[0]!, /^Sound excited\. -> not rule-checked: tone_requirement is verified by compare_judge/);
  assert.match(reasons[1]!, /^Answer in two paragraphs\. -> repeated type: paragraph_number_limit/);
  assert.match(reasons[2]!, /^Use exactly 3 sentences\. -> conflict: sentence_number_limit conflicts with punctuation_requirements/);
  assert.match(reasons[3]!, /^Never write "cat"\. -> conflict: 'cat' is both required and forbidden/);

  // Fewer usable candidates than turns: the earliest turns get them.
  assert.deepEqual(
    assignInstructions([3, 7, 11], [exclaim]).instructions.map((i) => i.turn),
    [3],
  );
});

test('instructions in force and the instruction a rejected answer forgets', () => {
  const plan = assignInstructions(
    [2, 5, 9],
    [
      rule('paragraph_number_limit', 'One paragraph.', 'check_whether_response_paragraph_number_in_range', [1, 1]),
      rule('punctuation_requirements', 'End with "!".', 'check_whether_each_sentence_end_with_certain_substring', ['!']),
      rule('word_count_range_limit', 'At most 60 words.', 'check_whether_response_word_count_in_range', [1, 60]),
    ],
  ).instructions;
  assert.deepEqual(instructionsInForce(plan, 1), []);
  assert.deepEqual(
    instructionsInForce(plan, 5).map((i) => i.turn),
    [2, 5],
  );
  assert.deepEqual(
    instructionsInForce(plan, 20).map((i) => i.turn),
    [2, 5, 9],
  );

  // Only an instruction given at an EARLIER turn can be forgotten: none at turn 2, only turn 2's at turn 5.
  assert.equal(droppedForRejected(rngFor('r', 0), plan, 2), undefined);
  assert.equal(droppedForRejected(rngFor('r', 0), plan, 5)?.turn, 2);
  const atNine = new Set<number>();
  for (let seed = 0; seed < 50; seed++) atNine.add(droppedForRejected(rngFor('r', seed), plan, 9)!.turn);
  assert.deepEqual([...atNine].sort(), [2, 5], 'turn 9 forgets turn 2 or turn 5, never its own instruction');
});
