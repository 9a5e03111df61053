/**
 * A multiturn sample's records (output/commit/chatRecords.ts) and their sharegpt rows (output/formats/chatFormats.ts),
 * from stage states written by hand: the chat record, a kept turn-level pair, a discarded one recorded
 * with its turn and instruction, and the refusals a trainer needs (`<image>` in a text).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { SourceSample } from '../../domain/sample.js';
import { assembleChat } from '../../output/commit/chatRecords.js';
import {
  chatConversationFromLine,
  chatPairConversationFromLine,
  chatPairSharegptLine,
  chatPairSharegptRow,
  chatSharegptLine,
  chatSharegptRow,
  trlChatPairRow,
  trlChatRow,
} from '../../output/formats/chatFormats.js';
import type { SampleStates } from '../../output/contracts/records.js';
import type { ChatResult } from '../../pipeline/run/stageState.js';
import type { Verdict } from '../../domain/verdict.js';
import { rule } from '../harness/plannedConstraints.js';
import { MULTITURN_SYSTEM_TEXT } from '../../prompts/multiturnChat.js';

const sample: SourceSample = { sampleId: 'cc3m-1', source: 'cc3m', sourceId: '001', licenseNote: 'cc', image: { sourceIndex: 0, locator: { path: 'k' } } };
const mention = rule('mention', 'Mention "harbor".', 'check_whether_each_keyword_in_list_mentioned_in_range', [['harbor'], 1, 10000]);
const short = rule('word_count_range_limit', 'Use at most 40 words.', 'check_whether_response_word_count_in_range', [1, 40]);
const verdict = (index: number, type: string, passed: boolean): Verdict => ({ index, type, method: 'rule', passed, detail: passed ? 'ok' : 'no' });

function states(chat: ChatResult): SampleStates {
  const ok = <S extends string, R>(stage: S, result: R) => ({ status: 'ok' as const, stage, result, calls: [] });
  return {
    image: ok('image', { sha256: 'ab'.repeat(32), origin: { file: 'a.jpg' }, width: 10, height: 10, originalWidth: 10, originalHeight: 10 }),
    instruction: ok('instruction', { instruction: 'task', origin: 'generated' as const, candidates: [], examples: [], questions: chat.turns.map((t) => t.question) }),
    constraints: ok('constraints', { instructionKind: 'open', offeredTypes: [], proposed: [], constraints: [mention, short], removed: [], trimmed: [] }),
    chat: ok('chat', chat),
  } as SampleStates;
}

const chat: ChatResult = {
  instructions: [
    { turn: 1, constraint: mention },
    { turn: 2, constraint: short },
  ],
  removed: [{ type: 'tone_requirement', value: 'Sound cheerful.', reason: 'not rule-checked' }],
  turns: [
    { turn: 1, question: 'What is shown?', instruction: mention.value, answer: 'A harbor.', attempts: 1, verdicts: [verdict(0, 'mention', true)], pif: 1 },
    {
      turn: 2,
      question: 'Which colours?',
      instruction: short.value,
      answer: 'Blue harbor water.',
      attempts: 2,
      verdicts: [verdict(0, 'mention', true), verdict(1, 'word_count_range_limit', true)],
      pif: 1,
      pair: { forgottenTurn: 1, rejected: 'Blue water.', rejectedVerdicts: [verdict(0, 'mention', false), verdict(1, 'word_count_range_limit', true)], judgement: { kept: true } },
    },
    {
      turn: 3,
      question: 'Any boats?',
      answer: 'Yes, in the harbor.',
      attempts: 1,
      verdicts: [verdict(0, 'mention', true), verdict(1, 'word_count_range_limit', true)],
      pif: 1,
      pair: {
        forgottenTurn: 1,
        rejected: 'Yes, by the harbor.',
        rejectedVerdicts: [verdict(0, 'mention', true), verdict(1, 'word_count_range_limit', true)],
        judgement: { kept: false, rule: 'uninformative-pair', detail: 'the rejected answer satisfied every constraint at stake' },
      },
    },
  ],
};

test('a chat record, its kept pair and its discarded pair, and their sharegpt rows', () => {
  const out = assembleChat(sample, states(chat));
  assert.equal(out.chat?.turns.length, 3);
  assert.deepEqual(
    out.chat?.turns.map((t) => [t.instruction, t.pif]),
    [
      [mention.value, 1],
      [short.value, 1],
      [null, 1],
    ],
  );
  assert.deepEqual(out.chat?.removed_instructions, chat.removed);
  assert.equal(out.pairs.length, 1);
  const [pair] = out.pairs;
  assert.equal(pair!.id, 'cc3m-1-t2-dpo');
  assert.deepEqual(pair!.forgotten_instruction, { type: 'mention', value: mention.value });
  assert.equal(pair!.rejected_pif, 0.5);
  assert.deepEqual(out.rejects, [
    {
      id: 'cc3m-1',
      source: 'cc3m',
      source_id: '001',
      kind: 'pair',
      stage: 'chat',
      reason: `chat: uninformative-pair: turn 3, answer made without turn 1's instruction #1 mention ("${mention.value}"): the rejected answer satisfied every constraint at stake`,
      verdicts: chat.turns[2]!.pair!.rejectedVerdicts,
      at_stake: [0],
      staged_image_path: `_work/images/ab/${'ab'.repeat(32)}.jpg`,
      instruction: 'task',
      constraints: [mention, short].map(({ type, value, method }) => ({ type, value, method })),
    },
  ]);

  const row = chatSharegptRow(out.chat!);
  assert.equal(row.system, MULTITURN_SYSTEM_TEXT);
  assert.deepEqual(row.conversations, [
    { from: 'human', value: `<image>\n${mention.value}\n\nWhat is shown?` },
    { from: 'gpt', value: 'A harbor.' },
    { from: 'human', value: `${short.value}\n\nWhich colours?` },
    { from: 'gpt', value: 'Blue harbor water.' },
    { from: 'human', value: 'Any boats?' },
    { from: 'gpt', value: 'Yes, in the harbor.' },
  ]);
  assert.deepEqual(row.images, [`images/ab/${'ab'.repeat(32)}.jpg`]);
  const meta = JSON.parse(row.metadata) as { turns: Array<Record<string, unknown>> };
  assert.deepEqual(Object.keys(meta.turns[0]!).sort(), ['attempts', 'instruction', 'pif', 'turn', 'verdicts'], 'texts live in conversations, verdicts and PIF in metadata');

  const pairRow = chatPairSharegptRow(pair!);
  assert.deepEqual(pairRow.conversations, row.conversations.slice(0, 3), "the chat up to the pair's turn, ending with its human turn");
  assert.deepEqual(pairRow.chosen, { from: 'gpt', value: 'Blue harbor water.' });
  assert.deepEqual(pairRow.rejected, { from: 'gpt', value: 'Blue water.' });
});

test('a written chat line read back: its exchanges as typed and its TRL messages, the image part in place of <image>', () => {
  const out = assembleChat(sample, states(chat));
  const line = chatSharegptLine(out.chat!);
  const typed = [`${mention.value}\n\nWhat is shown?`, `${short.value}\n\nWhich colours?`, 'Any boats?'];
  assert.deepEqual(
    chatConversationFromLine(line).exchanges,
    typed.map((user, i) => ({ user, answer: chat.turns[i]!.answer })),
  );
  const text = (value: string) => ({ type: 'text', text: value });
  const { messages } = trlChatRow(line);
  assert.deepEqual(messages.slice(0, 3), [
    { role: 'system', content: [text(MULTITURN_SYSTEM_TEXT)] },
    { role: 'user', content: [{ type: 'image' }, text(typed[0]!)] },
    { role: 'assistant', content: [text('A harbor.')] },
  ]);
  assert.deepEqual(messages[3], { role: 'user', content: [text(typed[1]!)] });

  const pairLine = chatPairSharegptLine(out.pairs[0]!);
  assert.deepEqual(chatPairConversationFromLine(pairLine).exchanges, [{ user: typed[0], answer: 'A harbor.' }, { user: typed[1] }]);
  assert.deepEqual(trlChatPairRow(pairLine).prompt.slice(1), [
    { role: 'user', content: [{ type: 'image' }, text(typed[0]!)] },
    { role: 'assistant', content: [text('A harbor.')] },
    { role: 'user', content: [text(typed[1]!)] },
  ]);
});

test('<image> in a turn rejects the chat naming the turn; in a rejected answer, only that pair', () => {
  const inAnswer = structuredClone(chat);
  inAnswer.turns[1]!.answer = 'See <image> here.';
  const out = assembleChat(sample, states(inAnswer));
  assert.equal(out.chat, undefined);
  assert.equal(out.pairs.length, 0);
  assert.match(out.rejects[0]!.reason, /^image-token-in-text: turn 2 contains the literal <image>/);
  const inRejected = structuredClone(chat);
  inRejected.turns[1]!.pair!.rejected = '<image> water.';
  const pairOnly = assembleChat(sample, states(inRejected));
  assert.ok(pairOnly.chat);
  assert.equal(pairOnly.pairs.length, 0);
  assert.ok(pairOnly.rejects.some((r) => r.kind === 'pair' && /turn 2's rejected answer contains the literal <image>/.test(r.reason)));
});

test("a rejected or unfinished stage becomes the sample's rejection, with its reason and what it passed", () => {
  const rejected = {
    ...states(chat),
    chat: { status: 'rejected', stage: 'chat', reason: 'chat: below-threshold: turn 4 PIF 0.50 < 1 after 3 attempts; failed: #2 mention (x)', calls: [] },
  } as SampleStates;
  assert.deepEqual(
    assembleChat(sample, rejected).rejects.map((r) => [r.kind, r.stage, r.reason]),
    [['sample', 'chat', 'chat: below-threshold: turn 4 PIF 0.50 < 1 after 3 attempts; failed: #2 mention (x)']],
  );
  // What the chat passed rides on its rejection, as on a single-turn one.
  const [refused] = assembleChat(sample, rejected).rejects;
  assert.deepEqual(
    [refused!.staged_image_path, refused!.instruction, refused!.constraints],
    [`_work/images/ab/${'ab'.repeat(32)}.jpg`, 'task', [mention, short].map(({ type, value, method }) => ({ type, value, method }))],
  );
  const { chat: _chat, ...unfinished } = states(chat);
  assert.deepEqual(
    assembleChat(sample, unfinished as SampleStates).rejects.map((r) => r.reason),
    ["incomplete: stage 'chat' never ran"],
  );
});
