import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inSpan, otlpTarget } from '../../telemetry/tracing.js';

const URL = 'http://127.0.0.1:4318';

test('OTLP export follows the standard variables: an endpoint turns it on, http/protobuf unless a protocol is named, the signal-specific ones first', () => {
  assert.equal(otlpTarget('TRACES', {}), undefined);
  assert.deepEqual(otlpTarget('TRACES', { OTEL_EXPORTER_OTLP_ENDPOINT: URL }), { protocol: 'http/protobuf' });
  assert.deepEqual(otlpTarget('TRACES', { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${URL}/v1/traces` }), { protocol: 'http/protobuf' });
  assert.equal(otlpTarget('METRICS', { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${URL}/v1/traces` }), undefined, 'a traces endpoint exports no metrics');
  assert.deepEqual(otlpTarget('TRACES', { OTEL_EXPORTER_OTLP_ENDPOINT: URL, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }), { protocol: 'http/json' });
  assert.deepEqual(otlpTarget('TRACES', { OTEL_EXPORTER_OTLP_ENDPOINT: URL, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' }), {
    protocol: 'http/json',
  });
  assert.equal(otlpTarget('TRACES', { OTEL_EXPORTER_OTLP_ENDPOINT: URL, OTEL_SDK_DISABLED: 'true' }), undefined);
  assert.equal(otlpTarget('TRACES', { OTEL_EXPORTER_OTLP_ENDPOINT: URL, OTEL_TRACES_EXPORTER: 'none' }), undefined);
  assert.throws(
    () => otlpTarget('METRICS', { OTEL_EXPORTER_OTLP_ENDPOINT: URL, OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'grpc' }),
    /^ConfigError: OTEL_EXPORTER_OTLP_METRICS_PROTOCOL=grpc: mmif exports OTLP over http\/protobuf or http\/json only$/,
  );
});

test('with tracing off a span is only its work: its attributes are never made', async () => {
  let made = 0;
  const value = await inSpan(
    'stage answer',
    () => {
      made += 1;
      return {};
    },
    async () => 42,
  );
  assert.equal(value, 42);
  assert.equal(made, 0);
  await assert.rejects(
    inSpan(
      'chat m',
      () => ({}),
      () => Promise.reject(new Error('refused')),
    ),
    /refused/,
  );
});
