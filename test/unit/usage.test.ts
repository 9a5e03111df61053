import { test } from 'node:test';
import assert from 'node:assert/strict';
import { costOf } from '../../llm/pricing.js';
import { usageOf } from '../../llm/usage.js';

const request = { promptTokens: 400, replyTokens: 1024 };
const replyText = 'x'.repeat(400); // 100 tokens at the estimate's 4 characters a token

test('usable counts are taken as reported', () => {
  const usage = {
    prompt_tokens: 380,
    completion_tokens: 90,
    total_tokens: 470,
    prompt_tokens_details: { cached_tokens: 128 },
    completion_tokens_details: { reasoning_tokens: 20 },
    cost: 0.001,
  };
  assert.deepEqual(usageOf(usage, { request, replyText }), { promptTokens: 380, completionTokens: 90, cachedPromptTokens: 128, reasoningTokens: 20, providerCostUsd: 0.001 });
});

test('a missing, negative, non-integer, non-finite, string or absurd count is replaced by the estimate, marked with the reason', () => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['missing usage', undefined, /^no usage reported$/],
    ['negative', { prompt_tokens: -2_000_000, completion_tokens: 90 }, /^prompt_tokens negative \(-2000000\)$/],
    ['absurd', { prompt_tokens: 2e300, completion_tokens: 2e300 }, /^prompt_tokens beyond what the request could use .*; completion_tokens beyond/],
    ['a string', { prompt_tokens: 'lots', completion_tokens: 'lots' }, /^prompt_tokens not a number \("lots"\); completion_tokens not a number/],
    ['non-integer', { prompt_tokens: 10.5, completion_tokens: 90 }, /^prompt_tokens not an integer \(10\.5\)$/],
    ['non-finite', { prompt_tokens: 380, completion_tokens: Infinity }, /^completion_tokens not finite \(Infinity\)$/],
    ['missing count', { completion_tokens: 90 }, /^prompt_tokens missing$/],
  ];
  for (const [what, reported, reason] of cases) {
    const usage = usageOf(reported, { request, replyText });
    assert.match(usage.estimated ?? '', reason, what);
    for (const n of [usage.promptTokens, usage.completionTokens]) assert.ok(Number.isInteger(n) && n >= 0 && n <= 10_000, `${what}: ${n}`);
  }
  // The estimate replaces only what was unusable: the prompt from the request, the completion from the reply.
  assert.deepEqual(usageOf({ prompt_tokens: -1, completion_tokens: 90 }, { request, replyText }), {
    promptTokens: 400,
    completionTokens: 90,
    estimated: 'prompt_tokens negative (-1)',
  });
  assert.deepEqual(usageOf({ prompt_tokens: 380, completion_tokens: -5 }, { request, replyText }), {
    promptTokens: 380,
    completionTokens: 100,
    estimated: 'completion_tokens negative (-5)',
  });
});

test('negative cached or reasoning tokens and a negative cost are dropped, marked; every count is priced without a throw', () => {
  const usage = usageOf(
    { prompt_tokens: 380, completion_tokens: 90, prompt_tokens_details: { cached_tokens: -2_000_000 }, completion_tokens_details: { reasoning_tokens: -1 }, cost: -3 },
    { request, replyText },
  );
  assert.deepEqual(usage, {
    promptTokens: 380,
    completionTokens: 90,
    estimated: 'cached_tokens negative (-2000000); reasoning_tokens negative (-1); cost -3',
  });
  // The price table (genai-prices) throws on a negative cache_read_tokens; the checked usage prices.
  const cost = costOf({ ...usage, model: 'gpt-4o', batch: false });
  assert.equal(cost.source, 'table');
  assert.ok(Number.isFinite(cost.usd) && cost.usd! > 0);
  // More cached tokens than prompt tokens: only the prompt's are counted as cached.
  assert.equal(usageOf({ prompt_tokens: 100, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 300 } }, { request, replyText }).cachedPromptTokens, 100);
});
