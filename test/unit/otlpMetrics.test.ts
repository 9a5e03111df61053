import { test } from 'node:test';
import assert from 'node:assert/strict';
import { otelMetricName, otelName } from '../../telemetry/otlpMetrics.js';

test('OTLP names are the Prometheus names spelled back the OpenTelemetry way: GenAI and server/error names take their dots, counters lose _total, seconds become the unit', () => {
  assert.deepEqual(otelMetricName('gen_ai_client_operation_duration_seconds', 'histogram'), { name: 'gen_ai.client.operation.duration', unit: 's' });
  assert.deepEqual(otelMetricName('gen_ai_client_token_usage', 'histogram'), { name: 'gen_ai.client.token.usage', unit: '' });
  assert.deepEqual(otelMetricName('mmif_requests_total', 'counter'), { name: 'mmif_requests', unit: '' });
  assert.deepEqual(otelMetricName('mmif_shard_commit_duration_seconds', 'histogram'), { name: 'mmif_shard_commit_duration', unit: 's' });
  assert.deepEqual(otelMetricName('mmif_lanes_busy', 'gauge'), { name: 'mmif_lanes_busy', unit: '' });
  for (const [prom, otel] of <Array<[string, string]>>[
    ['gen_ai_request_model', 'gen_ai.request.model'],
    ['gen_ai_token_type', 'gen_ai.token.type'],
    ['server_address', 'server.address'],
    ['error_type', 'error.type'],
    ['status_class', 'status_class'],
    ['build', 'build'],
  ])
    assert.equal(otelName(prom), otel);
});
