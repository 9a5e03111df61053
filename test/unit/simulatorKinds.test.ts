/**
 * The simulator tells requests apart by what the engine names (the x-mmif-request-kind header every
 * request carries, a batch line's custom_id) or by the reply schema's name, never by a prompt's
 * wording: every prompt the engine renders, its opening sentence rewritten, is still answered as
 * its kind, and a request stepped down from json_schema (no schema name left) is named by its header.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PROMPT_KINDS, type PromptKind } from '../../domain/promptKinds.js';
import { batchCustomId, parseBatchCustomId } from '../../llm/batch.js';
import { chatMessages } from '../../llm/chatMessages.js';
import type { RenderedPrompt } from '../../prompts/chat.js';
import { PLACEHOLDER_RENDERS } from '../../prompts/promptFingerprint.js';
import { ChatRequestSchema, detectKind, generateReply, type ChatRequest } from '../../simulator/replies.js';

const IMAGE = { jpeg: Buffer.from([0xff, 0xd8, 0xff, 0xd9]), sha256: 'img' };

/** The prompt with the opening sentence of each message replaced: the wording the old markers read is gone. */
function reworded(prompt: RenderedPrompt): RenderedPrompt {
  return { ...prompt, messages: prompt.messages.map((m) => ({ ...m, text: `Here is a reworded opening. ${m.text.replace(/^[^.\n]*[.\n]/, '')}` })) };
}

const requestOf = (prompt: RenderedPrompt, responseFormat?: unknown): ChatRequest =>
  ChatRequestSchema.parse({ model: 'sim-vlm', messages: chatMessages(prompt, IMAGE, 'low'), ...(responseFormat ? { response_format: responseFormat } : {}) });

const JSON_REPLIES: Partial<Record<PromptKind, string>> = {
  instructions: 'instructions',
  refined_instruction: 'instruction',
  chat_questions: 'questions',
  constraints: 'constraints',
  compatibility: 'keep',
  verifier_selection: 'calls',
  image_tags: 'tags',
};

test('every prompt, its opening sentence rewritten, is answered as its kind when its header names it', () => {
  for (const kind of PROMPT_KINDS) {
    const prompt = reworded(PLACEHOLDER_RENDERS[kind]());
    assert.equal(prompt.kind, kind);
    assert.notEqual(prompt.messages[0]!.text, PLACEHOLDER_RENDERS[kind]().messages[0]!.text, `${kind}: reworded`);
    const request = requestOf(prompt);
    assert.equal(detectKind(request, prompt.kind), kind);
    const reply = generateReply(request, 7, undefined, undefined, detectKind(request, prompt.kind));
    assert.equal(reply.kind, kind);
    const field = JSON_REPLIES[kind];
    if (field) assert.ok(field in (JSON.parse(reply.content) as object), `${kind}: a JSON reply with '${field}'`);
    else assert.ok(reply.content.length > 0, `${kind}: a reply`);
  }
});

test("a JSON prompt's schema name tells its kind without a header; stepped down to json_object, only the header does", () => {
  for (const [kind] of Object.entries(JSON_REPLIES) as Array<[PromptKind, string]>) {
    const prompt = reworded(PLACEHOLDER_RENDERS[kind]());
    assert.equal(detectKind(requestOf(prompt, { type: 'json_schema', json_schema: { name: kind, schema: { type: 'object' } } })), kind);
    const steppedDown = requestOf(prompt, { type: 'json_object' });
    assert.equal(detectKind(steppedDown, kind), kind, `${kind}: named by its header`);
    assert.equal(detectKind(steppedDown), 'answer', `${kind}: its wording alone names nothing`);
  }
});

test("a batch line's custom_id names its kind: the simulator reads it where a line has no header", () => {
  const id = batchCustomId({ sampleId: 'cc3m:a:b', stage: 'instruction', kind: 'refined_instruction', resubmission: 0 });
  assert.equal(parseBatchCustomId(id)?.kind, 'refined_instruction');
  const request = requestOf(reworded(PLACEHOLDER_RENDERS.refined_instruction()), { type: 'json_object' });
  assert.equal(detectKind(request, parseBatchCustomId(id)?.kind), 'refined_instruction');
});
