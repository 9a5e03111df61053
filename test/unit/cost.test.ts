/** Cost accounting: the price table, and CallRecord costs against the simulator's own token counts. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { ModelCaller, type CallRecord } from '../../llm/modelCaller.js';
import { DEFAULT_PRICES, costOf, priceFor, type PriceTable } from '../../llm/pricing.js';
import { renderAnswerPrompt } from '../../prompts/answerPrompt.js';
import { instructionReplySchema, renderInstructionPrompt } from '../../prompts/instructionPrompt.js';
import { startSimulator, type SimulatorHandle } from '../../simulator/server.js';
import { defaultLlmSettings } from '../harness/llmSettings.js';
import { LocalStore } from '../../storage/localStore.js';

let sim: SimulatorHandle;
let dir: string;
const llm = defaultLlmSettings();
const MODEL = 'cost-sim-vlm';
const prices: PriceTable = { [MODEL]: { inputPerMTok: 3, outputPerMTok: 15, batchDiscount: 0.5 } };
const image = { jpeg: Buffer.from('stand-in jpeg bytes'), sha256: 'cost-image' };

before(async () => {
  sim = await startSimulator({ seed: 9 });
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-cost-'));
});
after(async () => {
  await sim.close();
  await rm(dir, { recursive: true, force: true });
});

const endpoint = () => ({ model: MODEL, baseUrl: sim.url, apiKeyEnv: 'MMIF_TEST_UNSET_KEY', concurrency: 16, batch: false });
const sum = (calls: readonly CallRecord[], pick: (c: CallRecord) => number) => calls.reduce((total, c) => total + pick(c), 0);
const close = (actual: number, expected: number) => assert.ok(Math.abs(actual - expected) < 1e-12, `${actual} ≠ ${expected}`);

test('the price table: exact names, dated snapshots, batch discount, unknown models cost 0', () => {
  assert.equal(priceFor('gpt-4o-2024-08-06', DEFAULT_PRICES), DEFAULT_PRICES['gpt-4o']);
  assert.equal(priceFor('gpt-4o-mini-2024-07-18', DEFAULT_PRICES), DEFAULT_PRICES['gpt-4o-mini']);
  assert.equal(priceFor('gpt-4o-mini', DEFAULT_PRICES), DEFAULT_PRICES['gpt-4o-mini']);
  assert.equal(priceFor('gpt-4oo', DEFAULT_PRICES), undefined);
  const call = { model: 'gpt-4o', promptTokens: 1_000_000, completionTokens: 100_000, batch: false };
  close(costOf(call), 2.5 + 1);
  close(costOf({ ...call, batch: true }), (2.5 + 1) / 2);
  assert.equal(costOf({ ...call, model: 'Qwen2-VL-7B-Instruct' }), 0);
});

test('costs summed over calls equal the simulator-counted tokens times the price; cache hits cost 0 and save it', async () => {
  sim.resetStats();
  const caller = new ModelCaller(new LocalStore(path.join(dir, 'sync')), '_cache/llm', llm, { prices });
  const run = async (calls: CallRecord[]) => {
    await Promise.all([
      ...[1, 2, 3].map((i) =>
        caller.text({ stage: 'answer', endpoint: endpoint(), prompt: renderAnswerPrompt(`Describe the costly scene ${i}.`, []), image }, calls),
      ),
      caller.json({ stage: 'instruction', endpoint: endpoint(), prompt: renderInstructionPrompt(['Describe it.']), image }, 'instructions', instructionReplySchema, calls),
    ]);
  };
  const paid: CallRecord[] = [];
  await run(paid);
  const stats = sim.stats();
  assert.equal(paid.length, 4);
  const expected = (stats.promptTokens * 3 + stats.completionTokens * 15) / 1e6;
  assert.ok(expected > 0);
  close(sum(paid, (c) => c.costUsd), expected);
  assert.deepEqual(paid.map((c) => [c.cached, c.batch, c.savedUsd]), paid.map(() => [false, false, 0]));

  const again: CallRecord[] = [];
  await run(again);
  assert.equal(sim.stats().requests, stats.requests, 'the repeat was served from the cache');
  assert.ok(again.every((c) => c.cached && c.costUsd === 0));
  close(sum(again, (c) => c.savedUsd), expected);
});

test('a stored batch reply is priced at the batch discount, and a hit on it saves that much', async () => {
  sim.resetStats();
  const caller = new ModelCaller(new LocalStore(path.join(dir, 'batch')), '_cache/llm', llm, { prices });
  const req = { stage: 'answer' as const, endpoint: endpoint(), prompt: renderAnswerPrompt('Describe the discounted scene.', []), image };
  const prepared = caller.prepare(req);
  const completion = await new OpenAI({ baseURL: sim.url, apiKey: 'sim', maxRetries: 0 }).chat.completions.create(prepared.body);
  const stored = await caller.storeReply(prepared, completion);
  const listPrice = ((completion.usage?.prompt_tokens ?? 0) * 3 + (completion.usage?.completion_tokens ?? 0) * 15) / 1e6;
  assert.ok(listPrice > 0);
  assert.deepEqual([stored.cached, stored.batch], [false, true]);
  close(stored.costUsd, listPrice / 2);

  const calls: CallRecord[] = [];
  assert.equal(await caller.text(req, calls), completion.choices[0]?.message.content);
  assert.deepEqual(calls.map((c) => [c.cached, c.batch, c.costUsd]), [[true, true, 0]]);
  close(calls[0]!.savedUsd, listPrice / 2);
  assert.equal(sim.stats().requests, 1, 'only the call standing in for the batch reached the endpoint');
});

test('a torn cache entry (a crash while creating it) is not cached for the Batch API: its batch reply replaces it and is used', async () => {
  sim.resetStats();
  const root = path.join(dir, 'torn');
  const caller = new ModelCaller(new LocalStore(root), '_cache/llm', llm, { prices });
  const req = { stage: 'answer' as const, endpoint: endpoint(), prompt: renderAnswerPrompt('Describe the torn scene.', []), image };
  const prepared = caller.prepare(req);
  await mkdir(path.dirname(path.join(root, prepared.cacheKey)), { recursive: true });
  await writeFile(path.join(root, prepared.cacheKey), '{"content":"cut sho');
  assert.equal(await caller.isCached(prepared.cacheKey), false, 'the torn entry is not a reply: the request goes into the batch');

  const completion = await new OpenAI({ baseURL: sim.url, apiKey: 'sim', maxRetries: 0 }).chat.completions.create(prepared.body);
  await caller.storeReply(prepared, completion);
  assert.equal(await caller.isCached(prepared.cacheKey), true);
  const calls: CallRecord[] = [];
  assert.equal(await caller.text(req, calls), completion.choices[0]?.message.content);
  assert.deepEqual(calls.map((c) => [c.cached, c.batch]), [[true, true]], 'the batch reply is served, not paid again');
  assert.equal(sim.stats().requests, 1);
});
