/**
 * The simulator's provider-side prompt cache over HTTP: `usage.prompt_tokens_details.cached_tokens`
 * is the longest prompt prefix the same model computed before, in whole blocks, under OpenAI's
 * 1,024-token minimum or vLLM's 16-token blocks.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { imagePartTokens } from '../../simulator/replies.js';
import { PROMPT_CACHE_PRESETS } from '../../simulator/promptCache.js';
import { startSimulator, type SimulatorHandle } from '../../simulator/server.js';

let vllm: SimulatorHandle;
let openai: SimulatorHandle;
before(async () => {
  [vllm, openai] = await Promise.all([startSimulator({ seed: 1, promptCache: PROMPT_CACHE_PRESETS.vllm }), startSimulator({ seed: 1, promptCache: PROMPT_CACHE_PRESETS.openai })]);
});
after(async () => {
  await Promise.all([vllm.close(), openai.close()]);
});

const image = { type: 'image_url' as const, image_url: { url: `data:image/jpeg;base64,${Buffer.from('a stand-in jpeg').toString('base64')}` } };
const ask = async (sim: SimulatorHandle, messages: ChatCompletionMessageParam[], model = 'mmif-sim-vlm') => {
  const reply = await new OpenAI({ baseURL: sim.url, apiKey: 'sim', maxRetries: 0 }).chat.completions.create({ model, messages, max_tokens: 64 });
  return { prompt: reply.usage!.prompt_tokens, cached: reply.usage!.prompt_tokens_details?.cached_tokens };
};
/** The stand-in image's tokens as the default model counts it (its size unread: the largest image the pipeline sends). */
const IMAGE_TOKENS = imagePartTokens('mmif-sim-vlm', image);
const user = (text: string): ChatCompletionMessageParam[] => [{ role: 'user', content: [image, { type: 'text', text }] }];

test('vLLM-style: a second stage of the same image hits the shared prefix, in whole 16-token blocks; another model or image does not', async () => {
  const shared = 'Describe what the photograph shows in detail, then '.repeat(4);
  const first = await ask(vllm, user(`${shared}list the colours.`));
  assert.equal(first.cached, 0, 'nothing computed before');
  const second = await ask(vllm, user(`${shared}count the people.`));
  const sharedTokens = IMAGE_TOKENS + Math.floor(shared.length / 4);
  assert.equal(second.cached, Math.floor(sharedTokens / 16) * 16);
  assert.equal((await ask(vllm, user(`${shared}count the people.`), 'another-model')).cached, 0);
  const otherImage = [
    {
      role: 'user' as const,
      content: [
        { ...image, image_url: { url: `${image.image_url.url}AA` } },
        { type: 'text' as const, text: `${shared}x` },
      ],
    },
  ];
  assert.equal((await ask(vllm, otherImage)).cached, 0, 'the image comes first: a different image shares nothing');
  assert.equal(vllm.stats().cachedPromptTokens, second.cached);
});

test('OpenAI-style: prompts under 1,024 tokens are never cached; a longer repeated prefix hits in 128-token increments', async () => {
  const short = await ask(openai, user('Describe it.'));
  assert.equal((await ask(openai, user('Describe it.'))).cached, 0, `a ${short.prompt}-token prompt`);
  const long = 'Each constraint must be followed exactly as written. '.repeat(90);
  await ask(openai, user(`${long}First question.`));
  const again = await ask(openai, user(`${long}Second question.`));
  assert.ok(again.prompt >= 1024);
  assert.equal(again.cached, Math.floor((IMAGE_TOKENS + Math.floor(long.length / 4)) / 128) * 128);
});

test('without a prompt cache the usage carries no cached tokens and identical requests are answered alike', async () => {
  const plain = await startSimulator({ seed: 1 });
  try {
    const a = await ask(plain, user('Describe it.'));
    const b = await ask(plain, user('Describe it.'));
    assert.deepEqual(a, b);
    assert.equal(a.cached, undefined);
  } finally {
    await plain.close();
  }
});
