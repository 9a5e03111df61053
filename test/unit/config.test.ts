import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseBuildConfig } from '../../config/buildConfig.js';
import { fingerprintMaterial } from '../../config/fingerprint.js';
import { ConfigError } from '../../config/configError.js';
import { endpointReplicas } from '../../config/endpointReplicas.js';
import { endpointSlots, requestsPerSecondLimit } from '../../config/endpointRouting.js';
import { resolveEndpoint } from '../../llm/endpoint.js';

const minimal = {
  buildId: 'b1',
  output: '/tmp/out',
  sources: [{ type: 'cc3m', uri: '/data/cc3m' }],
  maxSamples: 10,
  models: { default: { model: 'gpt-4o-mini' } },
};

test('a minimal config gets documented defaults', () => {
  const c = parseBuildConfig(minimal);
  assert.equal(c.shardSize, 64);
  assert.equal(c.image.minShortSide, 224);
  assert.equal(c.constraints.min, 3);
  assert.equal(c.constraints.max, 12);
  assert.deepEqual(c.dpo.strategies, ['drop33']);
  assert.equal(c.verification.passThreshold, 0.8);
  assert.equal(c.llm.judgeTemperature, 0);
  assert.equal(c.models.default.apiKeyEnv, 'OPENAI_API_KEY');
  assert.deepEqual(c.sources[0], { ...c.sources[0], type: 'cc3m', layout: 'auto' });
  assert.equal(c.llm.replyTries, 3);
  assert.equal(c.llm.maxTokensCeiling, undefined);
  assert.deepEqual(c.llm.errorBudget, { maxFraction: 0.2, maxConsecutive: 8 });
  assert.equal(c.llm.preflight, true);
  assert.equal(c.llm.rerunModelCallRejects, true);
});

test('errors name every bad field by path', () => {
  const bad = { ...minimal, maxSamples: 0, sources: [{ type: 'cc3m', uri: '' }], image: { minShortSide: -1 } };
  assert.throws(
    () => parseBuildConfig(bad),
    (err: unknown) => err instanceof ConfigError && err.message.includes('maxSamples') && err.message.includes('sources.0.uri') && err.message.includes('image.minShortSide'),
  );
});

test('unknown fields, unknown sources and secrets-as-values are refused', () => {
  assert.throws(() => parseBuildConfig({ ...minimal, sauce: 1 }), /Unrecognized key.*sauce|sauce/);
  assert.throws(() => parseBuildConfig({ ...minimal, sources: [{ type: 'laion', uri: '/x' }] }), /sources\.0\.type/);
  // The key itself is never config: only the name of the variable holding it.
  assert.throws(() => parseBuildConfig({ ...minimal, models: { default: { model: 'm', apiKey: 'sk-123' } } }), /models\.default/);
  assert.throws(() => parseBuildConfig({ ...minimal, buildId: '../escape' }), /buildId/);
  assert.throws(() => parseBuildConfig({ ...minimal, constraints: { min: 5, max: 4 } }), /constraints\.min/);
  assert.throws(() => parseBuildConfig({ ...minimal, llm: { maxTokens: 1024, maxTokensCeiling: 512 } }), /llm\.maxTokensCeiling: must exceed llm\.maxTokens/);
  assert.throws(() => parseBuildConfig({ ...minimal, llm: { errorBudget: { maxFraction: 1.5 } } }), /llm\.errorBudget\.maxFraction/);
});

test('the fingerprint ignores operational knobs but not output-shaping settings', () => {
  const base = fingerprintMaterial(parseBuildConfig(minimal));
  assert.equal(fingerprintMaterial(parseBuildConfig({ ...minimal, maxParallelShards: 9, sliceSize: 3 })), base);
  assert.notEqual(fingerprintMaterial(parseBuildConfig({ ...minimal, seed: 1 })), base);
  assert.notEqual(fingerprintMaterial(parseBuildConfig({ ...minimal, models: { default: { model: 'other' } } })), base);
  assert.notEqual(fingerprintMaterial(parseBuildConfig({ ...minimal, image: { minShortSide: 100 } })), base);
  // The error budget and the pre-flight decide whether a build runs, not what it writes; reply tries do.
  assert.equal(fingerprintMaterial(parseBuildConfig({ ...minimal, llm: { errorBudget: { maxFraction: 0.5 }, preflight: false } })), base);
  // Whether a re-run regenerates model-call rejections can be chosen per run of the same build.
  assert.equal(fingerprintMaterial(parseBuildConfig({ ...minimal, llm: { rerunModelCallRejects: false } })), base);
  // The reply cap rejects what no build could use; it changes no reply that is kept.
  assert.equal(fingerprintMaterial(parseBuildConfig({ ...minimal, llm: { maxReplyBytes: 65536 } })), base);
  assert.ok(!base.includes('maxReplyBytes') && !base.includes('reasoningEffort') && !base.includes('azure'), base);
  // Keeping the reasoning adds fields to the records.
  assert.notEqual(fingerprintMaterial(parseBuildConfig({ ...minimal, training: { keepReasoning: true } })), base);
  assert.notEqual(fingerprintMaterial(parseBuildConfig({ ...minimal, llm: { replyTries: 5 } })), base);
});

test('a shard of more slices than its workflow history can hold is refused, naming the fields', () => {
  // shardSize 5000 in slices of 1: 25,000 stage activities in one shard workflow, which never continues as new.
  assert.throws(
    () => parseBuildConfig({ ...minimal, shardSize: 5000, sliceSize: 1 }),
    (err: unknown) => err instanceof ConfigError && /sliceSize: shardSize 5000 \/ sliceSize 1 makes 5000 slices per shard, over 250/.test(err.message),
  );
  assert.equal(parseBuildConfig({ ...minimal, shardSize: 5000, sliceSize: 20 }).sliceSize, 20, '250 slices are fine');
  assert.throws(() => parseBuildConfig({ ...minimal, shardSize: 5000, sliceSize: 19 }), /264 slices per shard/);
});

test('mode "multiturn": chat settings with defaults, bounds and clear errors; the fingerprint includes them', () => {
  const c = parseBuildConfig({ ...minimal, mode: 'multiturn' });
  assert.equal(c.mode, 'multiturn');
  assert.equal(parseBuildConfig(minimal).mode, 'single');
  const single = fingerprintMaterial(parseBuildConfig(minimal));
  assert.ok(single.includes('"mode":"single"') && !single.includes('"chat"'));
  const multi = fingerprintMaterial(c);
  assert.notEqual(multi, single);
  assert.ok(multi.includes('"chat":{"maxInstructions":6,"pifThreshold":1,"turns":10}'), multi);
  // Explicit defaults fingerprint like omitted ones; other settings do not.
  assert.equal(fingerprintMaterial(parseBuildConfig({ ...minimal, mode: 'multiturn', chat: { turns: 10 } })), multi);
  assert.notEqual(fingerprintMaterial(parseBuildConfig({ ...minimal, mode: 'multiturn', chat: { turns: 4 } })), multi);
  assert.notEqual(fingerprintMaterial(parseBuildConfig({ ...minimal, mode: 'multiturn', chat: { maxInstructions: 3 } })), multi);
  assert.notEqual(fingerprintMaterial(parseBuildConfig({ ...minimal, mode: 'multiturn', chat: { pifThreshold: 0.5 } })), multi);

  const refused = (input: object, message: RegExp) =>
    assert.throws(
      () => parseBuildConfig({ ...minimal, ...input }),
      (err: Error) => err instanceof ConfigError && message.test(err.message),
    );
  refused({ mode: 'multiturn', chat: { turns: 21 } }, /chat\.turns: .*20/);
  refused({ mode: 'multiturn', chat: { maxInstructions: 7 } }, /chat\.maxInstructions: .*6/);
  refused({ mode: 'multiturn', chat: { pifThreshold: 0 } }, /chat\.pifThreshold/);
  refused({ mode: 'multiturn', chat: { turn: 3 } }, /chat\.turn: unknown field; did you mean turns\?/);
  refused({ mode: 'chat' }, /mode: /);
  refused({ chat: { turns: 3 } }, /chat: chat settings apply to mode "multiturn" only/);
  refused({ mode: 'multiturn', models: { default: { model: 'm' }, answer: { model: 'm', batch: true } } }, /models\.answer\.batch: the Batch API is not used by multiturn builds/);
  refused({ mode: 'multiturn', targets: { instruct: 5 } }, /targets: targets are not supported by multiturn builds yet/);
});

test('a model role may name several replicas, each with its own limits; slots and rate add up per replica; replica limits are operational', () => {
  const replicas = ['http://gpu0:8000/v1', { baseUrl: 'http://gpu1:8000/v1', concurrency: 8, requestsPerMinute: 120 }];
  const c = parseBuildConfig({ ...minimal, models: { default: { model: 'qwen', concurrency: 4, requestsPerMinute: 60, baseUrls: replicas } } });
  assert.deepEqual(endpointReplicas(c.models.default), [
    { baseUrl: 'http://gpu0:8000/v1', concurrency: 4, requestsPerMinute: 60, tokensPerMinute: undefined },
    { baseUrl: 'http://gpu1:8000/v1', concurrency: 8, requestsPerMinute: 120, tokensPerMinute: undefined },
  ]);
  assert.equal(endpointSlots(c), 12);
  assert.equal(requestsPerSecondLimit(c), 3);
  const resolved = resolveEndpoint(c.models.default, {});
  assert.equal(resolved.baseURL, 'http://gpu0:8000/v1');
  assert.deepEqual(
    resolved.replicas.map((r) => [r.baseURL, r.concurrency]),
    [
      ['http://gpu0:8000/v1', 4],
      ['http://gpu1:8000/v1', 8],
    ],
  );
  // A single baseUrl is one replica carrying the endpoint's limits.
  const single = parseBuildConfig({ ...minimal, models: { default: { model: 'qwen', baseUrl: 'http://gpu0:8000/v1/', concurrency: 5 } } });
  assert.deepEqual(resolveEndpoint(single.models.default, {}).replicas, [
    { baseURL: 'http://gpu0:8000/v1', concurrency: 5, requestsPerMinute: undefined, tokensPerMinute: undefined },
  ]);
  // Tuning a replica's limits keeps the fingerprint; changing the replica set does not.
  const retuned = parseBuildConfig({ ...minimal, models: { default: { model: 'qwen', baseUrls: [replicas[0], { baseUrl: 'http://gpu1:8000/v1', concurrency: 64 }] } } });
  assert.equal(fingerprintMaterial(retuned), fingerprintMaterial(c));
  const more = parseBuildConfig({ ...minimal, models: { default: { model: 'qwen', baseUrls: [...replicas, 'http://gpu2:8000/v1'] } } });
  assert.notEqual(fingerprintMaterial(more), fingerprintMaterial(c));
  // The order of baseUrls means nothing: the same fingerprint, and the endpoint known by the lowest URL (its reply cache key and dialect memory).
  const reordered = parseBuildConfig({ ...minimal, models: { default: { model: 'qwen', baseUrls: ['http://gpu2:8000/v1', replicas[1]!, replicas[0]!] } } });
  assert.equal(fingerprintMaterial(reordered), fingerprintMaterial(more));
  assert.equal(resolveEndpoint(reordered.models.default, {}).baseURL, 'http://gpu0:8000/v1');
  assert.equal(resolveEndpoint(more.models.default, {}).baseURL, 'http://gpu0:8000/v1');
  assert.deepEqual(
    resolveEndpoint(reordered.models.default, {}).replicas.map((r) => r.baseURL),
    ['http://gpu2:8000/v1', 'http://gpu1:8000/v1', 'http://gpu0:8000/v1'],
    'requests still go to every replica',
  );
});

test('baseUrls is refused with baseUrl, with azure, empty, naming a replica twice, or several with the Batch API', () => {
  const bad = (endpoint: object) => () => parseBuildConfig({ ...minimal, models: { default: { model: 'qwen', ...endpoint } } });
  assert.throws(bad({ baseUrl: 'http://a:1/v1', baseUrls: ['http://b:1/v1'] }), /models\.default\.baseUrls.*set baseUrl or baseUrls, not both/s);
  assert.throws(bad({ baseUrls: ['http://b:1/v1'], azure: { apiVersion: '2024-10-21' } }), /Azure deployment has one baseUrl/);
  assert.throws(bad({ baseUrls: [] }), /models\.default\.baseUrls/);
  assert.throws(bad({ baseUrls: ['http://b:1/v1', { baseUrl: 'http://b:1/v1/' }] }), /replica http:\/\/b:1\/v1 is listed twice/);
  assert.throws(
    bad({ baseUrls: ['http://a:1/v1', 'http://b:1/v1'], batch: true }),
    /models\.default\.batch: the Batch API is not used with several replicas \(baseUrls names 2\): vLLM and SGLang serve no \/v1\/batches/,
  );
  assert.doesNotThrow(bad({ baseUrls: ['http://a:1/v1'], batch: true }), 'one server in baseUrls takes batches as baseUrl does');
  assert.doesNotThrow(bad({ baseUrls: ['http://a:1/v1', 'http://b:1/v1'], batch: false }));
});
