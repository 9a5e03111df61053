import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseBuildConfig } from '../../config/buildConfig.js';
import { retrySpanLine, retrySpanMs } from '../../cli/retrySpan.js';

const config = (extra: Record<string, unknown> = {}) =>
  parseBuildConfig({ buildId: 'b', output: '/o', sources: [{ type: 'cc3m', uri: '/x' }], maxSamples: 1, models: { default: { model: 'm' } }, ...extra });

test('how long a transiently failing call is retried: every try of every activity attempt, from the retry settings', () => {
  // Defaults: 6 tries per call wait up to 1 + 2 + 4 + 8 + 16 = 31 s; 8 activity attempts wait
  // 2 + 4 + 8 + 16 + 32 + 64 + 120 (capped) = 246 s between them: 8 × 31 + 246 = 494 s.
  assert.equal(retrySpanMs(config()), 494_000);
  assert.equal(
    retrySpanLine(config()),
    'calls are retried for up to about 8.2 min of back-off (llm.retry.maxAttempts 6 tries per call, retry.maximumAttempts 8 attempts per shard) before the build gives up',
  );
  // 3 tries (0.5 + 1 s, the second capped at 1 s) × 2 attempts + 3 s between them.
  const small = config({ llm: { retry: { maxAttempts: 3, baseDelayMs: 500, maxDelayMs: 1000 } }, retry: { maximumAttempts: 2, initialIntervalSeconds: 3 } });
  assert.equal(retrySpanMs(small), 2 * 1500 + 3000);
  assert.match(
    retrySpanLine(small),
    /^calls are retried for up to about 6 s of back-off \(llm\.retry\.maxAttempts 3 tries per call, retry\.maximumAttempts 2 attempts per shard\)/,
  );
  assert.equal(retrySpanMs(config({ llm: { retry: { maxAttempts: 1 } }, retry: { maximumAttempts: 1 } })), 0, 'one try, one attempt: no wait');
});
