/** The metrics' settings and labels: the address forms MMIF_METRICS_ADDR takes, and labels that stay bounded and keyless. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { metricsAddressOf, parseMetricsAddress } from '../../telemetry/metricsServer.js';
import { enableMetrics, endpointLabel, recordAttempt, recordSample, scrapeEngineMetrics } from '../../telemetry/metrics.js';

test('a bare port binds the loopback; any other interface is named', () => {
  assert.deepEqual(parseMetricsAddress('9464', 'X'), { host: '127.0.0.1', port: 9464 });
  assert.deepEqual(parseMetricsAddress(':9464', 'X'), { host: '127.0.0.1', port: 9464 });
  assert.deepEqual(parseMetricsAddress('0.0.0.0:9464', 'X'), { host: '0.0.0.0', port: 9464 });
  assert.deepEqual(parseMetricsAddress('[::1]:9464', 'X'), { host: '::1', port: 9464 });
  assert.throws(() => parseMetricsAddress('localhost', 'MMIF_METRICS_ADDR'), /MMIF_METRICS_ADDR must be host:port or a port .* got 'localhost'/);
  assert.throws(() => parseMetricsAddress('1.2.3.4:70000', '--metrics'), /--metrics must be/);
});

test('the flag wins over MMIF_METRICS_ADDR; neither: no metrics', () => {
  assert.deepEqual(metricsAddressOf('127.0.0.1:1', { MMIF_METRICS_ADDR: '2' }), { host: '127.0.0.1', port: 1 });
  assert.deepEqual(metricsAddressOf(undefined, { MMIF_METRICS_ADDR: '2' }), { host: '127.0.0.1', port: 2 });
  assert.equal(metricsAddressOf(undefined, {}), undefined);
});

test('an endpoint label keeps no credentials, query or fragment', () => {
  assert.equal(endpointLabel('https://user:sk-secret@api.example.com/v1/?key=sk-secret#x'), 'https://api.example.com/v1');
  assert.equal(endpointLabel('not a url'), 'unparsable');
});

test('nothing is recorded before metrics are enabled; a reason that is not a short code counts as other', async () => {
  recordSample('b', 'cc3m', 'answer', 'rejected', 'too-small');
  assert.doesNotMatch(await scrapeEngineMetrics(), /mmif_samples_total\{/);
  enableMetrics();
  recordSample('b', 'cc3m', 'answer', 'rejected', 'too-small');
  recordSample('b', 'cc3m', 'answer', 'rejected', 'Sample 0001 had a free-text reason');
  recordAttempt({ build: 'b', role: 'answer', endpoint: 'http://127.0.0.1:1/v1', model: 'm' }, 0.5, 2, 429, 'rate-limited');
  const text = await scrapeEngineMetrics();
  assert.match(text, /mmif_rejections_total\{build="b",source="cc3m",stage="answer",reason="too-small"\} 1/);
  assert.match(text, /mmif_rejections_total\{build="b",source="cc3m",stage="answer",reason="other"\} 1/);
  assert.match(text, /mmif_requests_total\{build="b",role="answer",endpoint="http:\/\/127.0.0.1:1\/v1",model="m",status_class="4xx"\} 1/);
  assert.match(text, /mmif_rate_limited_total\{.*\} 1/);
  assert.match(text, /mmif_request_retries_total\{.*\} 1/);
  assert.match(text, /gen_ai_client_operation_duration_seconds_count\{.*gen_ai_request_model="m",server_address="127.0.0.1",error_type="rate-limited"\} 1/);
});
