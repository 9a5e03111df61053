/** Cost accounting: the price table, and CallRecord costs against the simulator's own token counts. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { ModelCaller } from '../../llm/modelCaller.js';
import type { CallRecord } from '../../llm/callRecord.js';
import { PRICE_TABLE, costOf, overrideFor, type PriceOverrides } from '../../llm/pricing.js';
import { callUsage, emptyUsage, addUsage, unpricedUsage } from '../../output/commit/manifest.js';
import { costSummary, formatCost } from '../../output/reports/costSummary.js';
import { renderAnswerPrompt } from '../../prompts/answerPrompt.js';
import { instructionReplySchema, renderInstructionPrompt } from '../../prompts/instructionPrompt.js';
import { startSimulator, type SimulatorHandle } from '../../simulator/server.js';
import { defaultLlmSettings } from '../harness/llmSettings.js';
import { LocalStore } from '../../storage/localStore.js';

let sim: SimulatorHandle;
let dir: string;
const llm = defaultLlmSettings();
const MODEL = 'cost-sim-vlm';
const prices: PriceOverrides = { [MODEL]: { inputPerMTok: 3, outputPerMTok: 15, batchDiscount: 0.5 } };
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

test('the pinned price table is the installed one, and its bundled data is used (its auto-update is never installed)', async () => {
  const main = createRequire(import.meta.url).resolve('@pydantic/genai-prices');
  const installed = JSON.parse(await readFile(path.join(path.dirname(main), '..', 'package.json'), 'utf8')) as { version: string };
  const pinned = (JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { dependencies: Record<string, string> }).dependencies;
  assert.equal(installed.version, PRICE_TABLE.version);
  assert.equal(pinned[PRICE_TABLE.package], PRICE_TABLE.version, 'package.json pins the exact version the reports name');
  // Offline: pricing never reaches for the network (the package fetches only through an updater we never install).
  const realFetch = globalThis.fetch;
  let fetched = 0;
  globalThis.fetch = (() => {
    fetched += 1;
    throw new Error('no network');
  }) as typeof fetch;
  try {
    assert.equal(costOf({ model: 'gpt-4o-mini', promptTokens: 1_000_000, completionTokens: 0, batch: false }).source, 'table');
  } finally {
    globalThis.fetch = realFetch;
  }
  assert.equal(fetched, 0);
});

// Prices of @pydantic/genai-prices 0.1.8 (OpenAI's list prices): gpt-4o input 2.5, cached input 1.25, output 10 USD/MTok.
test('table prices: dated snapshots, cached input, reasoning as output, batch discount; the provider by URL', () => {
  const call = { model: 'gpt-4o', promptTokens: 1_000_000, completionTokens: 100_000, batch: false };
  assert.deepEqual(costOf(call), { usd: 2.5 + 1, source: 'table' });
  assert.deepEqual(costOf({ ...call, model: 'gpt-4o-2024-08-06' }), { usd: 2.5 + 1, source: 'table' });
  close(costOf({ ...call, cachedPromptTokens: 400_000 }).usd!, 0.6 * 2.5 + 0.4 * 1.25 + 1);
  close(costOf({ ...call, batch: true }).usd!, (2.5 + 1) / 2);
  // Reasoning tokens are part of the completion tokens: the same price when the model has no reasoning price of its own.
  close(costOf({ ...call, reasoningTokens: 60_000 }).usd!, 2.5 + 1);
  // The same model sold by OpenRouter is priced as OpenRouter sells it.
  const viaRouter = costOf({ ...call, model: 'openai/gpt-4o', baseUrl: 'https://openrouter.ai/api/v1' });
  assert.equal(viaRouter.source, 'table');
  assert.ok(viaRouter.usd! > 0);
  assert.deepEqual(costOf({ ...call, model: 'openai/gpt-4o' }), { usd: undefined, source: 'unpriced' }, 'no provider sells that name without the URL');
});

test('an unknown model is unpriced (never $0); the config prices it; a provider-reported cost is used as is', () => {
  const call = { model: 'Qwen2-VL-7B-Instruct', promptTokens: 1_000_000, completionTokens: 100_000, batch: false };
  assert.deepEqual(costOf(call), { usd: undefined, source: 'unpriced' });
  const own: PriceOverrides = { 'Qwen2-VL-7B-Instruct': { inputPerMTok: 0.2, outputPerMTok: 0.6, cachedInputPerMTok: 0.05, batchDiscount: 0.25 } };
  assert.equal(overrideFor('Qwen2-VL-7B-Instruct-AWQ', own), own['Qwen2-VL-7B-Instruct']);
  close(costOf(call, own).usd!, 0.2 + 0.06);
  close(costOf({ ...call, cachedPromptTokens: 500_000 }, own).usd!, 0.1 + 0.025 + 0.06);
  close(costOf({ ...call, batch: true }, own).usd!, (0.2 + 0.06) * 0.75);
  // The config's price wins over the table's.
  close(costOf({ ...call, model: 'gpt-4o' }, { 'gpt-4o': { inputPerMTok: 1, outputPerMTok: 1, batchDiscount: 0.5 } }).usd!, 1.1);
  assert.deepEqual(costOf({ ...call, providerCostUsd: 0.0123 }), { usd: 0.0123, source: 'provider' });

  // In the reports: the unpriced model by name with its tokens, never in the USD figure.
  const record = {
    stage: 'answer' as const,
    model: call.model,
    promptTokens: 700,
    completionTokens: 50,
    cached: false,
    simulated: false,
    costUsd: 0,
    savedUsd: 0,
    batch: false,
    costSource: 'unpriced' as const,
  };
  const priced = {
    ...record,
    model: 'gpt-4o',
    promptTokens: 1000,
    cachedPromptTokens: 600,
    completionTokens: 100,
    reasoningTokens: 40,
    costUsd: 0.25,
    costSource: 'table' as const,
  };
  const usage = emptyUsage();
  for (const c of [record, priced, { ...record, cached: true }]) addUsage(usage, callUsage(c));
  const cost = costSummary({ answer: usage }, unpricedUsage([record, priced, { ...record, cached: true }]), { instruct: 5, dpo: 2 }, false);
  assert.deepEqual(cost.unpriced, { 'Qwen2-VL-7B-Instruct': { requests: 1, promptTokens: 700, completionTokens: 50 } }, 'cache hits are not paid');
  assert.deepEqual([cost.usd, cost.perSftRecord, cost.perPair, cost.reasoningTokens], [0.25, 0.05, 0.125, 40]);
  close(cost.cachedPromptShare, 600 / 2400);
  const lines = formatCost(cost);
  assert.equal(lines[0], 'cost $0.2500 for the priced models ($0.05000 per SFT record, $0.12500 per pair)');
  assert.equal(lines[2], 'UNPRICED model Qwen2-VL-7B-Instruct: 1 requests, 700 prompt + 50 completion tokens not in the cost (set llm.prices["Qwen2-VL-7B-Instruct"])');
  assert.match(formatCost({ ...cost, forecast: true })[0]!, /^forecast \$0\.2500 at the named models' prices \(simulated build: nothing was spent\)/);
});

test('costs summed over calls equal the simulator-counted tokens times the price; cache hits cost 0 and save it', async () => {
  sim.resetStats();
  const caller = new ModelCaller(new LocalStore(path.join(dir, 'sync')), '_cache/llm', llm, { prices });
  const run = async (calls: CallRecord[]) => {
    await Promise.all([
      ...[1, 2, 3].map((i) => caller.text({ stage: 'answer', endpoint: endpoint(), prompt: renderAnswerPrompt(`Describe the costly scene ${i}.`, []), image }, calls)),
      caller.json({ stage: 'instruction', endpoint: endpoint(), prompt: renderInstructionPrompt(['Describe it.']), image }, 'instructions', instructionReplySchema, calls),
    ]);
  };
  const paid: CallRecord[] = [];
  await run(paid);
  const stats = sim.stats();
  assert.equal(paid.length, 4);
  const expected = (stats.promptTokens * 3 + stats.completionTokens * 15) / 1e6;
  assert.ok(expected > 0);
  close(
    sum(paid, (c) => c.costUsd),
    expected,
  );
  assert.ok(paid.every((c) => c.costSource === 'config'));
  assert.deepEqual(
    paid.map((c) => [c.cached, c.batch, c.savedUsd]),
    paid.map(() => [false, false, 0]),
  );

  const again: CallRecord[] = [];
  await run(again);
  assert.equal(sim.stats().requests, stats.requests, 'the repeat was served from the cache');
  assert.ok(again.every((c) => c.cached && c.costUsd === 0));
  close(
    sum(again, (c) => c.savedUsd),
    expected,
  );
});

test('a stored batch reply is priced at the batch discount, and a hit on it saves that much', async () => {
  sim.resetStats();
  const caller = new ModelCaller(new LocalStore(path.join(dir, 'batch')), '_cache/llm', llm, { prices });
  const req = { stage: 'answer' as const, endpoint: endpoint(), prompt: renderAnswerPrompt('Describe the discounted scene.', []), image };
  const prepared = await caller.prepare(req);
  const completion = await new OpenAI({ baseURL: sim.url, apiKey: 'sim', maxRetries: 0 }).chat.completions.create(prepared.body);
  const stored = await caller.storeReply(prepared, completion);
  const listPrice = ((completion.usage?.prompt_tokens ?? 0) * 3 + (completion.usage?.completion_tokens ?? 0) * 15) / 1e6;
  assert.ok(listPrice > 0);
  assert.deepEqual([stored.cached, stored.batch], [false, true]);
  close(stored.costUsd, listPrice / 2);

  const calls: CallRecord[] = [];
  assert.equal(await caller.text(req, calls), completion.choices[0]?.message.content);
  assert.deepEqual(
    calls.map((c) => [c.cached, c.batch, c.costUsd]),
    [[true, true, 0]],
  );
  close(calls[0]!.savedUsd, listPrice / 2);
  assert.equal(sim.stats().requests, 1, 'only the call standing in for the batch reached the endpoint');
});

test('a torn cache entry (a crash while creating it) is not cached for the Batch API: its batch reply replaces it and is used', async () => {
  sim.resetStats();
  const root = path.join(dir, 'torn');
  const caller = new ModelCaller(new LocalStore(root), '_cache/llm', llm, { prices });
  const req = { stage: 'answer' as const, endpoint: endpoint(), prompt: renderAnswerPrompt('Describe the torn scene.', []), image };
  const prepared = await caller.prepare(req);
  await mkdir(path.dirname(path.join(root, prepared.cacheKey)), { recursive: true });
  await writeFile(path.join(root, prepared.cacheKey), '{"content":"cut sho');
  assert.equal(await caller.isCached(prepared.cacheKey), false, 'the torn entry is not a reply: the request goes into the batch');

  const completion = await new OpenAI({ baseURL: sim.url, apiKey: 'sim', maxRetries: 0 }).chat.completions.create(prepared.body);
  await caller.storeReply(prepared, completion);
  assert.equal(await caller.isCached(prepared.cacheKey), true);
  const calls: CallRecord[] = [];
  assert.equal(await caller.text(req, calls), completion.choices[0]?.message.content);
  assert.deepEqual(
    calls.map((c) => [c.cached, c.batch]),
    [[true, true]],
    'the batch reply is served, not paid again',
  );
  assert.equal(sim.stats().requests, 1);
});
