import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApplicationFailure } from '@temporalio/common';
import { maskSecrets, readSecret } from '../../config/secrets.js';
import { maskedFailure } from '../../worker/maskSecretsInterceptor.js';
import { EndpointError } from '../../llm/endpointError.js';

const env = { OPENAI_API_KEY: 'sk-openai-0123456789', MY_PROXY_KEY: 'proxy-secret-abcdef', SHORT: 'x' };

test('always-secret variables and the ones read through readSecret are masked by name; a short value where it stands as a word', () => {
  assert.equal(maskSecrets('key sk-openai-0123456789 and proxy-secret-abcdef', env), 'key [secret OPENAI_API_KEY] and proxy-secret-abcdef');
  assert.equal(readSecret('MY_PROXY_KEY', env), 'proxy-secret-abcdef');
  assert.equal(maskSecrets('proxy-secret-abcdef twice proxy-secret-abcdef', env), '[secret MY_PROXY_KEY] twice [secret MY_PROXY_KEY]');
  readSecret('SHORT', env);
  assert.equal(maskSecrets('x marks the spot, not the index', env), '[secret SHORT] marks the spot, not the index');
});

const key7 = 'Zq7shrt';
const b64 = (text: string) => Buffer.from(text).toString('base64');

test('a key of any length is masked in the forms it is echoed in: plain, URL-encoded, JSON-escaped, base64 of itself, of its Bearer header and of user:key', () => {
  const keys = { SEVEN: key7, LONG: 'sk-live/abc+def=ghi"jkl' };
  for (const name of Object.keys(keys)) readSecret(name, keys);
  const echoes = (key: string) => [
    `"apiKey":"${key}"`,
    `Authorization: Bearer ${key}`,
    `?key=${encodeURIComponent(key)}`,
    `Authorization=Bearer%20${encodeURIComponent(key)}%0A`,
    JSON.stringify(`line\n${key}\tnext`),
    JSON.stringify({ echoed: key }),
    `echo ${b64(key)}`,
    `echo ${b64(`Bearer ${key}`)}`,
    `Basic ${b64(`user:${key}`)}`,
    `Basic ${b64(`a-longer-user-name:${key}`)}`,
    `Basic ${b64(`us:${key}`)}`,
    Buffer.from(`Bearer ${key}`).toString('base64url'),
    // Inside a longer base64 text, at each of the three alignments.
    ...[0, 1, 2].map((n) => b64(`${'p'.repeat(n)}{"authorization":"Bearer ${key}","more":"text"}`)),
  ];
  for (const [name, key] of Object.entries(keys)) {
    for (const echo of echoes(key)) {
      const masked = maskSecrets(echo, keys);
      assert.ok(masked.includes(`[secret ${name}]`), `${name} in ${echo}: ${masked}`);
      for (const form of [key, encodeURIComponent(key), b64(key), b64(key).replace(/=+$/, '')]) assert.ok(!masked.includes(form), `${form} left in ${masked}`);
    }
  }
  assert.equal(maskSecrets('Zq7shrtX and aZq7shrt stay: part of other words', keys), 'Zq7shrtX and aZq7shrt stay: part of other words');
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

test('the codec masks the variable a payload names as apiKeyEnv, in a process that never read it (a client starting a build)', async () => {
  const { maskingPayloadCodec } = await import('../../worker/maskingPayloadCodec.js');
  const { defaultPayloadConverter } = await import('@temporalio/common');
  process.env.MMIF_NAMED_ONLY_KEY = 'Nk7shrt';
  try {
    const config = { models: { default: { model: 'm', apiKeyEnv: 'MMIF_NAMED_ONLY_KEY' } }, decontamination: { sets: ['/data/Nk7shrt/bench'] } };
    const [masked] = await maskingPayloadCodec.encode([defaultPayloadConverter.toPayload(config)!]);
    assert.deepEqual(defaultPayloadConverter.fromPayload(masked!), { ...config, decontamination: { sets: ['/data/[secret MMIF_NAMED_ONLY_KEY]/bench'] } });
  } finally {
    delete process.env.MMIF_NAMED_ONLY_KEY;
  }
});

test("the OTLP exporters' header variables are secret: the list, each header's value as sent (percent-decoded) and a token after its scheme", () => {
  const [token, traces] = ['otlp-canary-3c9e1f7a55', 'otlp-traces-canary-0b64d2'];
  const env = { OTEL_EXPORTER_OTLP_HEADERS: `x-honeycomb-team=${token},x-dataset=mmif`, OTEL_EXPORTER_OTLP_TRACES_HEADERS: `Authorization=Bearer%20${traces}` };
  assert.equal(maskSecrets(`refused key ${token} for mmif`, env), 'refused key [secret OTEL_EXPORTER_OTLP_HEADERS] for mmif', 'a short header value is no secret');
  for (const echo of [`Authorization: Bearer ${traces}`, `token ${traces} rejected`, b64(`Bearer ${traces}`), env.OTEL_EXPORTER_OTLP_TRACES_HEADERS]) {
    const masked = maskSecrets(echo, env);
    assert.ok(masked.includes('[secret OTEL_EXPORTER_OTLP_TRACES_HEADERS]') && !masked.includes(traces), `${echo}: ${masked}`);
  }
  const temporal = { TEMPORAL_CODEC_AUTH: 'Bearer codec-canary-81d2', TEMPORAL_TLS_CLIENT_KEY_DATA: '-----BEGIN PRIVATE KEY-----MIIEvQ' };
  assert.equal(
    maskSecrets(`auth Bearer codec-canary-81d2; key -----BEGIN PRIVATE KEY-----MIIEvQ`, temporal),
    'auth [secret TEMPORAL_CODEC_AUTH]; key [secret TEMPORAL_TLS_CLIENT_KEY_DATA]',
  );
});
