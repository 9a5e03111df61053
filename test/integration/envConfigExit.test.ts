/**
 * A bad environment variable is a config error wherever it is read (a worker's activity slots, an OTLP
 * export interval or protocol, the simulator's port): `mmif` exits 2, as for a config file that does
 * not parse, with one line naming the variable and its value. Each is refused before anything
 * connects, so no Temporal server is needed (the address given refuses).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EXIT } from '../../cli/exitCodes.js';
import { runMmif } from '../harness/mmifCli.js';

const NOWHERE = { TEMPORAL_ADDRESS: '127.0.0.1:1', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1' };

test('a bad number or protocol in the environment exits 2 from `mmif worker` and `mmif simulator`, on one line naming it', async () => {
  const refusals: Array<[command: string, env: Record<string, string>, line: string]> = [
    ['worker', { MMIF_MAX_CONCURRENT_ACTIVITIES: 'many' }, 'Invalid environment variable MMIF_MAX_CONCURRENT_ACTIVITIES="many": expected a positive number'],
    ['worker', { OTEL_METRIC_EXPORT_INTERVAL: 'soon' }, 'Invalid environment variable OTEL_METRIC_EXPORT_INTERVAL="soon": expected a positive number of milliseconds'],
    ['worker', { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 'OTEL_EXPORTER_OTLP_PROTOCOL=grpc: mmif exports OTLP over http/protobuf or http/json only'],
    ['simulator', { SIM_PORT: 'eighty' }, 'Invalid environment variable SIM_PORT="eighty": Invalid input: expected number, received NaN'],
  ];
  const results = await Promise.all(refusals.map(([command, env]) => runMmif([command], { env: { ...NOWHERE, ...env } })));
  assert.deepEqual(
    results.map((r) => [r.code, r.stdout, r.stderr]),
    refusals.map(([, , line]) => [EXIT.usage, '', `mmif: ${line}\n`]),
  );
});
