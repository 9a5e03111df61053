/** The questions of a multiturn build's chats: the prompt, the simulator's reply to it, and their cleaning. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chatQuestionsReplySchema, renderChatQuestionsPrompt } from '../../prompts/chatQuestionsPrompt.js';
import { chatTask, distinctQuestions } from '../../pipeline/stages/questions/questionStage.js';
import { ChatRequestSchema, generateReply } from '../../simulator/replies.js';

const asRequest = (count: number, structured: boolean) =>
  ChatRequestSchema.parse({
    model: 'sim-vlm',
    messages: [{ role: 'user', content: renderChatQuestionsPrompt(count).messages[0]!.text }],
    ...(structured ? { response_format: { type: 'json_schema', json_schema: { name: 'chat_questions', schema: { type: 'object' } } } } : {}),
  });

test('the simulator answers the questions prompt with exactly the N distinct questions it asks for, named by its schema or, without one, by its kind', () => {
  for (const count of [1, 5, 12, 20]) {
    for (const structured of [true, false]) {
      const reply = generateReply(asRequest(count, structured), 3, undefined, undefined, structured ? undefined : 'chat_questions');
      assert.equal(reply.kind, 'chat_questions');
      const { questions } = chatQuestionsReplySchema.parse(JSON.parse(reply.content));
      assert.equal(questions.length, count);
      assert.equal(distinctQuestions(questions).length, count, `distinct: ${questions.join(' | ')}`);
      assert.ok(questions.every((q) => q.endsWith('?')));
    }
  }
});

test('questions are cleaned: blanks and repeats (case and spacing aside) dropped, order kept; the chat task lists them', () => {
  assert.deepEqual(distinctQuestions(['  What is red? ', '', 'what  is RED?', 'Where is the dog?']), ['What is red?', 'Where is the dog?']);
  assert.equal(chatTask(['A?', 'B?']), 'Answer these questions about the image, one per turn of a conversation:\n1. A?\n2. B?');
});
