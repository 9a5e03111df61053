/**
 * Image ids for the servers' caches (llm/imageIds.ts): sent on every image part except to OpenAI's
 * services, salted without showing the salt, learned away from a refusal, and left out of the reply
 * cache's key (the reply does not depend on them).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { adapt, baseDialect, refusedParameter, requestBody } from '../../llm/dialect.js';
import { imageIdOf, isOpenAiService } from '../../llm/imageIds.js';
import { replyCacheKey } from '../../llm/replyCache.js';
import { chatMessages } from '../../llm/chatMessages.js';

const image = { jpeg: Buffer.from('jpeg bytes'), sha256: 'a'.repeat(64) };
const prompt = { kind: 'answer' as const, version: 'v1', messages: [{ role: 'user' as const, text: 'Describe it.', withImage: true }] };
const ask = { model: 'qwen', messages: chatMessages(prompt, image, 'auto'), temperature: 0, maxTokens: 9, imageId: image.sha256 };
const imageParts = (messages: ChatCompletionMessageParam[]): Array<Record<string, unknown>> =>
  messages.flatMap((m) => (Array.isArray(m.content) ? (m.content as unknown as Array<Record<string, unknown>>) : [])).filter((p) => p.type === 'image_url');

test("OpenAI's services are api.openai.com and Azure; everything else gets image ids", () => {
  assert.ok(isOpenAiService({ baseURL: 'https://api.openai.com/v1' }));
  assert.ok(isOpenAiService({ baseURL: 'https://acme.openai.azure.com/openai/deployments/gpt-4o' }));
  assert.ok(isOpenAiService({ baseURL: 'https://gateway.example/v1', azure: { resource: 'x' } }));
  for (const baseURL of ['http://127.0.0.1:8000/v1', 'https://openrouter.ai/api/v1', 'https://api.openai.com.evil.example/v1']) assert.ok(!isOpenAiService({ baseURL }), baseURL);
  assert.equal(baseDialect('gpt-4o', { baseURL: 'https://api.openai.com/v1' }).imageIds, false);
  assert.equal(baseDialect('qwen', { baseURL: 'http://127.0.0.1:8000/v1' }).imageIds, true);
});

test('the id goes on the image part beside image_url (vLLM’s uuid), and not where the dialect sends none', () => {
  const vllm = requestBody(ask, baseDialect('qwen', { baseURL: 'http://127.0.0.1:8000/v1' }));
  assert.deepEqual(
    imageParts(vllm.messages).map((p) => p.uuid),
    [image.sha256],
  );
  const openai = requestBody(ask, baseDialect('gpt-4o', { baseURL: 'https://api.openai.com/v1' }));
  assert.ok(!JSON.stringify(openai).includes('uuid'));
});

test('a refusal of the id is read from a path into the messages or from the words, and the id is dropped once', () => {
  const dialect = baseDialect('qwen', { baseURL: 'http://127.0.0.1:8000/v1' });
  const body = requestBody(ask, dialect);
  assert.equal(refusedParameter({ param: 'messages.0.content.0.uuid', message: 'Extra inputs are not permitted' }, body), 'uuid');
  assert.equal(refusedParameter({ param: undefined, message: `Invalid JSON payload received. Unknown name "uuid" at 'messages[0].content[0]': Cannot find field.` }, body), 'uuid');
  // A body without ids: the word names nothing it sent.
  assert.equal(refusedParameter({ param: undefined, message: 'Unknown name "uuid"' }, requestBody(ask, { ...dialect, imageIds: false })), undefined);
  const learned = adapt(dialect, 'uuid', 'Unknown name "uuid"')!;
  assert.equal(learned.imageIds, false);
  assert.ok(!JSON.stringify(requestBody(ask, learned)).includes('uuid'));
  assert.equal(adapt(learned, 'uuid', 'again'), undefined, 'nothing left to try');
});

test('a tenant salt keys the id: another id per salt, the salt nowhere in it; no salt: the sha256', () => {
  const env = { MMIF_TEST_SALT: 'tenant-secret-salt' };
  const salted = imageIdOf(image.sha256, 'MMIF_TEST_SALT', env);
  assert.match(salted, /^[0-9a-f]{64}$/);
  assert.notEqual(salted, image.sha256);
  assert.notEqual(salted, imageIdOf(image.sha256, 'MMIF_TEST_SALT', { MMIF_TEST_SALT: 'other-tenant' }));
  assert.ok(!salted.includes('tenant-secret-salt'));
  assert.equal(imageIdOf(image.sha256, undefined, env), image.sha256);
  assert.equal(imageIdOf(image.sha256, 'MMIF_TEST_UNSET_SALT', env), image.sha256);
});

test('the reply cache key leaves the id out: a salt or a learned refusal never pays for a reply again', () => {
  const dialect = baseDialect('qwen', { baseURL: 'http://127.0.0.1:8000/v1' });
  const key = (body: ReturnType<typeof requestBody>) => replyCacheKey('http://127.0.0.1:8000/v1', body, { prompt, image }, 'auto', 0);
  const withId = requestBody(ask, dialect);
  assert.equal(key(withId), key(requestBody(ask, { ...dialect, imageIds: false })));
  assert.equal(key(withId), key(requestBody({ ...ask, imageId: 'f'.repeat(64) }, dialect)));
});
