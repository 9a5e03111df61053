import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApplicationFailure } from '@temporalio/common';
import { maskSecrets, readSecret } from '../../config/secrets.js';
import { maskedFailure } from '../../worker/maskSecretsInterceptor.js';
import { EndpointError } from '../../llm/endpointError.js';

const env = { OPENAI_API_KEY: 'sk-openai-0123456789', MY_PROXY_KEY: 'proxy-secret-abcdef', SHORT: 'x' };

test('always-secret variables and the ones read through readSecret are masked by name; short values are not', () => {
  assert.equal(maskSecrets('key sk-openai-0123456789 and proxy-secret-abcdef', env), 'key [secret OPENAI_API_KEY] and proxy-secret-abcdef');
  assert.equal(readSecret('MY_PROXY_KEY', env), 'proxy-secret-abcdef');
  assert.equal(maskSecrets('proxy-secret-abcdef twice proxy-secret-abcdef', env), '[secret MY_PROXY_KEY] twice [secret MY_PROXY_KEY]');
  readSecret('SHORT', env);
  assert.equal(maskSecrets('x marks the spot', env), 'x marks the spot');
});

test('a failure leaves the worker masked: SDK errors lose their body properties, Temporal failures keep their class', () => {
  process.env.MMIF_UNIT_KEY = 'sk-unit-test-key-42';
  readSecret('MMIF_UNIT_KEY');
  try {
    const sdkError = Object.assign(new Error('500 Incorrect key sk-unit-test-key-42'), { name: 'InternalServerError', error: { message: 'sk-unit-test-key-42' } });
    const copy = maskedFailure(sdkError) as Error;
    assert.equal(copy.name, 'InternalServerError');
    assert.equal(copy.message, '500 Incorrect key [secret MMIF_UNIT_KEY]');
    assert.ok(!JSON.stringify({ ...copy, stack: copy.stack }).includes('sk-unit-test-key-42'));

    // Temporal takes a plain error's failure type from its class; retry policies match it (EndpointError fails fast).
    const endpointError = maskedFailure(new EndpointError('HTTP 401: sk-unit-test-key-42', { endpoint: 'http://x/v1', model: 'm', status: 401, excerpt: '' }));
    assert.ok(endpointError instanceof ApplicationFailure);
    assert.deepEqual([endpointError.type, endpointError.name, endpointError.message], ['EndpointError', 'EndpointError', 'HTTP 401: [secret MMIF_UNIT_KEY]']);

    const failure = ApplicationFailure.nonRetryable('refused sk-unit-test-key-42', 'EndpointError');
    const masked = maskedFailure(failure) as ApplicationFailure;
    assert.ok(masked instanceof ApplicationFailure && masked.nonRetryable);
    assert.equal(masked.message, 'refused [secret MMIF_UNIT_KEY]');
  } finally {
    delete process.env.MMIF_UNIT_KEY;
  }
});

test('the worker payload codec masks secrets in JSON payloads (history), leaves others and clean ones as they are', async () => {
  const { maskingPayloadCodec } = await import('../../worker/maskingPayloadCodec.js');
  const { defaultPayloadConverter } = await import('@temporalio/common');
  process.env.MMIF_CODEC_KEY = 'sk-codec-test-key-77';
  readSecret('MMIF_CODEC_KEY');
  const secretPayload = defaultPayloadConverter.toPayload({ reason: 'Incorrect API key provided: sk-codec-test-key-77' })!;
  const cleanPayload = defaultPayloadConverter.toPayload({ reason: 'fine' })!;
  const bytesPayload = defaultPayloadConverter.toPayload(new TextEncoder().encode('sk-codec-test-key-77'))!;
  const [masked, clean, bytes] = await maskingPayloadCodec.encode([secretPayload, cleanPayload, bytesPayload]);
  assert.deepEqual(defaultPayloadConverter.fromPayload(masked!), { reason: 'Incorrect API key provided: [secret MMIF_CODEC_KEY]' });
  assert.equal(clean, cleanPayload, 'a payload without a secret is passed through untouched');
  assert.equal(bytes, bytesPayload, 'binary payloads are not rewritten');
  delete process.env.MMIF_CODEC_KEY;
});
