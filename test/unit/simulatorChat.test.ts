/**
 * The simulator answering multi-turn chats (simulator/answers.ts writeChatAnswer): it reads the
 * instructions of every user turn from the pipeline's own chat context (prompts/multiturnChat.ts),
 * remembers recent ones better than old ones, and follows appended ones best, so PIF measured with the
 * real verifiers falls over a chat and rises under the append-all ablation (seed 002's shape).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderChatTurn, type ChatTurn } from '../../prompts/multiturnChat.js';
import { scoreTurn } from '../../pipeline/stages/chat/turnScore.js';
import type { PlannedConstraint } from '../../pipeline/run/stageState.js';
import { rule } from '../harness/plannedConstraints.js';
import { allGlobalInstructions } from '../../pipeline/stages/chat/globalInstructions.js';
import type { ChatInstruction } from '../../domain/multiturn/chatPlan.js';
import { ChatRequestSchema, generateReply } from '../../simulator/replies.js';
import { chatMessages } from '../../llm/chatMessages.js';
import type { RenderedPrompt } from '../../prompts/chat.js';

const SEED = 7;
const instructions: Array<ChatInstruction<PlannedConstraint>> = [
  { turn: 1, constraint: rule('paragraph_number_limit', 'From now on, answer in exactly 2 paragraphs.', 'check_whether_response_paragraph_number_in_range', [2, 2]) },
  {
    turn: 2,
    constraint: rule('mention', 'From now on, mention the word "harbor" at least once.', 'check_whether_each_keyword_in_list_mentioned_in_range', [['harbor'], 1, 10000]),
  },
  { turn: 3, constraint: rule('word_count_range_limit', 'From now on, use at most 80 words.', 'check_whether_response_word_count_in_range', [1, 80]) },
];

function chatOf(id: number, turns: number): ChatTurn[] {
  return Array.from({ length: turns }, (_, i) => ({
    question: `Chat ${id}, question ${i + 1}: what stands out in the picture?`,
    instruction: instructions.find((x) => x.turn === i + 1)?.constraint,
    answer: `An earlier answer ${i + 1}.`,
  }));
}

/** A chat turn as the model caller sends it (llm/chatMessages.ts): the image, then the standing rule, then the turns. */
const IMAGE = { jpeg: Buffer.from('not decoded by the simulator'), sha256: 'image' };
const requestOf = (prompt: RenderedPrompt) => ChatRequestSchema.parse({ model: 'sim-vl', messages: chatMessages(prompt, IMAGE, 'low') });

function answerPif(chat: ChatTurn[], turn: number, appendAll: boolean, complianceRate = 0.9, persistence = 0.97): number {
  const request = requestOf(renderChatTurn(chat, turn - 1, { appendAll }));
  const reply = generateReply(request, SEED, { complianceRate, judgeLeniency: 0.9, persistence }, undefined, 'chat_answer');
  assert.equal(reply.kind, 'chat_answer');
  return scoreTurn(
    reply.content,
    instructions.filter((x) => x.turn <= turn),
    'pass',
  ).pif!;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

test('a chat answer is deterministic and follows appended instructions exactly when compliance is 1', () => {
  const chat = chatOf(0, 20);
  const request = requestOf(renderChatTurn(chat, 19));
  assert.equal(generateReply(request, SEED, undefined, undefined, 'chat_answer').content, generateReply(request, SEED, undefined, undefined, 'chat_answer').content);
  // Every instruction appended, nothing to forget: the real verifiers pass all of them on every chat.
  for (let id = 0; id < 30; id++) assert.equal(answerPif(chatOf(id, 20), 20, true, 1, 0.97), 1, `chat ${id}`);
});

test('PIF falls from turn 3 to turn 20 and the append-all ablation raises it again', () => {
  const ids = Array.from({ length: 150 }, (_, i) => i);
  const early = mean(ids.map((id) => answerPif(chatOf(id, 20), 3, false)));
  const late = mean(ids.map((id) => answerPif(chatOf(id, 20), 20, false)));
  const appended = mean(ids.map((id) => answerPif(chatOf(id, 20), 20, true)));
  // Expected about 0.9·(0.97² + 0.97 + 1)/3 ≈ 0.87, 0.9·0.97^18 ≈ 0.52 and 0.9 (seeded, so fixed numbers).
  assert.ok(early > 0.8, `turn 3 PIF ${early}`);
  assert.ok(late < early - 0.2, `turn 20 PIF ${late} vs turn 3 ${early}`);
  assert.ok(appended > late + 0.2, `append-all PIF ${appended} vs ${late}`);
});

test('persistent ("From now on") instructions are followed with the configured persistence: 1 keeps every one, 0 forgets each after its turn', () => {
  const ids = Array.from({ length: 60 }, (_, i) => i);
  // Turn 20: every instruction was given turns earlier.
  assert.equal(mean(ids.map((id) => answerPif(chatOf(id, 20), 20, false, 1, 1))), 1, 'persistence 1: followed as if just given');
  const forgotten = mean(ids.map((id) => answerPif(chatOf(id, 20), 20, false, 1, 0)));
  assert.ok(forgotten < 0.6, `persistence 0: earlier instructions are followed only by chance (PIF ${forgotten})`);
  const half = mean(ids.map((id) => answerPif(chatOf(id, 20), 20, false, 1, 0.9)));
  assert.ok(half > forgotten && half < 1, `persistence 0.9 lies between (PIF ${half})`);
});

test('standing "From now on, start/end every answer with X" instructions are followed at the compliance rate, decayed by persistence per turn', () => {
  // The eval's own global instructions (pipeline/stages/chat/globalInstructions.ts), checked by the real rule functions.
  const standing = allGlobalInstructions().filter((g) => g.type === 'prefix_and_suffix');
  assert.ok(standing.length >= 4 && standing.every((g) => g.value.startsWith('From now on,')));
  const [complianceRate, persistence, chats] = [0.8, 0.9, 300];
  for (const g of standing) {
    for (const turnsAgo of [0, 3]) {
      const turn = turnsAgo + 1;
      let followed = 0;
      for (let id = 0; id < chats; id++) {
        const chat: ChatTurn[] = Array.from({ length: turn }, (_, i) => ({
          question: `Chat ${id}, question ${i + 1}: what stands out in the picture?`,
          ...(i === 0 ? { instruction: g } : {}),
          answer: `An earlier answer ${i + 1}.`,
        }));
        const request = requestOf(renderChatTurn(chat, turn - 1));
        const reply = generateReply(request, SEED, { complianceRate, judgeLeniency: 0.9, persistence }, undefined, 'chat_answer');
        if (scoreTurn(reply.content, [{ turn: 1, constraint: g }], 'pass').verdicts[0]!.passed) followed++;
      }
      // A binomial count: within 4 standard deviations of its mean (a false alarm about once in 16,000 runs of one check; the seed fixes the outcome).
      const p = complianceRate * persistence ** turnsAgo;
      const tolerance = 4 * Math.sqrt(p * (1 - p) * chats);
      assert.ok(
        Math.abs(followed - p * chats) <= tolerance,
        `"${g.value}" given ${turnsAgo} turns back: followed ${followed}/${chats}, expected ${(p * chats).toFixed(0)} ± ${tolerance.toFixed(0)}`,
      );
    }
  }
});
