/**
 * A build's trace and metrics over OTLP as an operator gets them: `mmif worker` in a process of its own and `mmif build --wait`
 * both with OTEL_EXPORTER_OTLP_ENDPOINT pointing at a loopback OTLP receiver (test/harness/otlpReceiver.ts),
 * against the dev server and the simulator. The receiver gets one trace for the build: the client's
 * build span at its root, the build workflow, its shard children, their activities, a span per
 * sample and stage covering every stage of the mode, and a span per model call under its stage,
 * carrying the stage, role, model and outcome, and not the API key in any form. The worker pushes
 * the engine's metrics to the same receiver: the instruments of the Prometheus scrape under their
 * OpenTelemetry names, with the build report's values.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { MODEL_ROLES } from '../../config/modelsConfig.js';
import { stagesFor } from '../../config/stages.js';
import { startTemporalDevServer, stopProcess, type DevServer } from '../../local/temporalDevServer.js';
import { startSimulator, type SimulatorHandle } from '../../simulator/server.js';
import { LocalStore } from '../../storage/localStore.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import { engineMetricsJson } from '../../telemetry/metrics.js';
import { otelMetricName } from '../../telemetry/otlpMetrics.js';
import { writeCc3m } from '../fixtures/cc3m.js';
import { historiesText, leaks } from '../harness/canaryScan.js';
import { runMmif, startWorkerProcess } from '../harness/mmifCli.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../harness/otlpReceiver.js';

const TASK_QUEUE = 'mmif-tracing';
const CANARY = 'sk-canary-tracing-5b02e9aa41';
/** The backend key OTLP exports carry in a header (OTEL_EXPORTER_OTLP_HEADERS), as a hosted backend takes it. */
const HEADER_CANARY = 'otlp-key-canary-9e4b7c21d0';
const MODEL = 'mmif-sim-vlm';

let dir: string;
let server: DevServer;
let simulator: SimulatorHandle;
let receiver: OtlpReceiver;
let worker: ChildProcess;
/** What the worker printed once polling. */
let workerLog = '';

/** OTLP over HTTP/JSON to the receiver; spans sent within 200 ms of ending and metrics every 500 ms rather than 5 s and 60 s. */
const otlpEnv = () => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
  OTEL_EXPORTER_OTLP_HEADERS: `x-api-key=${HEADER_CANARY}`,
  OTEL_BSP_SCHEDULE_DELAY: '200',
  OTEL_METRIC_EXPORT_INTERVAL: '500',
});
const BUILD = 'traced';

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-tracing-'));
  await writeCc3m(new LocalStore(path.join(dir, 'cc3m')), 'files', { perShard: 8, shards: 1 });
  [server, simulator, receiver] = await Promise.all([startTemporalDevServer(), startSimulator({ seed: 5 }), startOtlpReceiver()]);
  worker = await startWorkerProcess({ temporalAddress: server.address, taskQueue: TASK_QUEUE, baseUrl: simulator.url, more: { OPENAI_API_KEY: CANARY, ...otlpEnv() } });
  for (const stream of [worker.stdout!, worker.stderr!]) stream.on('data', (d: Buffer) => (workerLog += d.toString()));
});

after(async () => {
  if (worker) await stopProcess(worker);
  await receiver?.close();
  await simulator?.close();
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The chain of span names from `span` up to its root, by parent links among the received spans. */
function ancestry(span: ReceivedSpan, byId: Map<string, ReceivedSpan>): string[] {
  const names = [span.name];
  for (let at = byId.get(span.parentSpanId); at; at = byId.get(at.parentSpanId)) names.push(at.name);
  return names;
}

test('a traced build sends one trace, from the client span through workflows and activities to every stage and model call', async () => {
  const buildId = BUILD;
  const file = path.join(dir, 'build.json');
  await writeFile(
    file,
    JSON.stringify({
      buildId,
      seed: 1,
      output: path.join(dir, 'out'),
      sources: [{ type: 'cc3m', uri: path.join(dir, 'cc3m') }],
      maxSamples: 8,
      shardSize: 4,
      models: { default: { model: MODEL } },
    }),
  );
  const built = await runMmif(['build', '--config', file, '--wait'], {
    env: { TEMPORAL_ADDRESS: server.address, MMIF_TASK_QUEUE: TASK_QUEUE, OPENAI_BASE_URL: simulator.url, ...otlpEnv() },
  });
  assert.equal(built.code, 0, built.stderr);

  // The worker sends its spans in batches: wait until the build workflow's own span (it ends last) is in.
  const roots = () => receiver.spans().filter((s) => s.name === 'mmif build');
  while (!receiver.spans().some((s) => s.name === 'RunWorkflow:buildDataset')) await new Promise((r) => setTimeout(r, 100));
  assert.equal(roots().length, 1, 'one build span, from the client');
  const root = roots()[0]!;
  assert.equal(root.service, 'mmif');
  assert.equal(root.attributes['mmif.build'], buildId);

  const ofBuild = receiver.spans().filter((s) => s.attributes['mmif.build'] === buildId || String(s.attributes.workflowId ?? '').startsWith(buildId));
  assert.deepEqual(new Set(ofBuild.map((s) => s.traceId)), new Set([root.traceId]), 'every span of the build is in its one trace');
  const trace = receiver.spans().filter((s) => s.traceId === root.traceId);
  const byId = new Map(trace.map((s) => [s.spanId, s]));
  const names = new Set(trace.map((s) => s.name));
  for (const name of ['StartWorkflow:buildChecks', 'StartWorkflow:buildDataset', 'RunWorkflow:buildDataset', 'StartChildWorkflow:buildShard', 'RunWorkflow:buildShard'])
    assert.ok(names.has(name), `${name} in ${[...names].join(', ')}`);
  assert.ok(
    trace.some((s) => s.service === 'mmif-worker' && s.name.startsWith('RunActivity:')),
    'activities on the worker continue the trace',
  );

  // Every stage of the mode ran under the trace, each span under an activity of a shard of the build.
  const stageSpans = trace.filter((s) => s.name.startsWith('stage '));
  assert.deepEqual(new Set(stageSpans.map((s) => s.attributes['mmif.stage'])), new Set(stagesFor('single')));
  for (const span of stageSpans) {
    const chain = ancestry(span, byId);
    assert.equal(chain.at(-1), 'mmif build', chain.join(' < '));
    assert.ok(chain.some((n) => n.startsWith('RunActivity:')) && chain.includes('RunWorkflow:buildShard') && chain.includes('RunWorkflow:buildDataset'), chain.join(' < '));
    assert.equal(span.attributes['mmif.source'], 'cc3m');
    assert.ok(['ok', 'rejected'].includes(String(span.attributes['mmif.outcome'])), JSON.stringify(span.attributes));
  }

  // Each model call: a child of its stage's span (the pre-flight's, of the checks' activity), named
  // and attributed after the GenAI conventions, in the trace down from the build span.
  const calls = trace.filter((s) => s.attributes['gen_ai.operation.name'] === 'chat');
  const [preflight, staged] = [calls.filter((c) => c.attributes['mmif.role'] === 'preflight'), calls.filter((c) => c.attributes['mmif.role'] !== 'preflight')];
  assert.ok(preflight.length > 0 && staged.length > 0, 'model calls were traced, the pre-flight and the stages');
  for (const call of calls) {
    const parent = byId.get(call.parentSpanId)!;
    if (call.attributes['mmif.role'] === 'preflight') assert.ok(parent.name.startsWith('RunActivity:') && call.attributes['mmif.stage'] === undefined, parent.name);
    else {
      assert.ok((MODEL_ROLES as readonly string[]).includes(String(call.attributes['mmif.role'])), String(call.attributes['mmif.role']));
      assert.ok(
        parent.name.startsWith('stage ') && parent.attributes['mmif.stage'] === call.attributes['mmif.stage'],
        `${parent.name} over a call in ${call.attributes['mmif.stage']}`,
      );
    }
    assert.equal(ancestry(call, byId).at(-1), 'mmif build');
    assert.equal(call.name, `chat ${MODEL}`);
    assert.equal(call.attributes['gen_ai.request.model'], MODEL);
    assert.equal(call.attributes['server.address'], '127.0.0.1');
    assert.ok(['ok', 'failed'].includes(String(call.attributes['mmif.outcome'])));
  }
  assert.ok(calls.length <= simulator.stats().requests, 'no more call spans than requests the simulator answered');

  assert.deepEqual(
    receiver.bodies().flatMap((b) => leaks(b, CANARY)),
    [],
    'the API key appears in no span',
  );
});

test("the OTLP backend's key (OTEL_EXPORTER_OTLP_HEADERS) goes out in the exports' header and nowhere else: no span, metric, log or history", async () => {
  const sent = receiver.headers();
  assert.ok(sent.length > 0 && sent.every((h) => h['x-api-key'] === HEADER_CANARY), 'every export carried the header');
  assert.deepEqual(
    receiver.bodies().flatMap((b) => leaks(b, HEADER_CANARY)),
    [],
    'the key is in a span or metric',
  );
  assert.deepEqual(leaks(workerLog, HEADER_CANARY), [], 'the key is in the worker log');
  const connection = await Connection.connect({ address: server.address });
  try {
    const histories = await historiesText(new Client({ connection }), BUILD);
    assert.ok(histories.includes(BUILD), 'the build histories were read');
    assert.deepEqual(leaks(histories, HEADER_CANARY), [], 'the key is in a workflow history');
  } finally {
    await connection.close();
  }
});

test("the worker pushes the engine's metrics over OTLP: the scrape's instruments, named as OpenTelemetry names them, with the report's values", async () => {
  const connection = await Connection.connect({ address: server.address });
  const report = (await new Client({ connection }).workflow.getHandle(BUILD).result()) as BuildReport;
  await connection.close();
  // Cumulative points, export after export: the last of each series is the total. Wait for one taken after the build.
  const last = (name: string, where: (a: Record<string, unknown>) => boolean) => [
    ...new Map((receiver.metrics().get(name) ?? []).filter((p) => where(p.attributes)).map((p) => [JSON.stringify(p.attributes), p])).values(),
  ];
  const accepted = () => last('mmif_records_accepted', (a) => a.build === BUILD).reduce((n, p) => n + p.value, 0);
  while (accepted() < report.counts.instruct) await new Promise((r) => setTimeout(r, 100));
  assert.equal(accepted(), report.counts.instruct);

  const received = receiver.metrics();
  const instruments = new Set((await engineMetricsJson()).map((f) => otelMetricName(f.name, f.type).name));
  assert.deepEqual(
    [...received.keys()].filter((name) => !instruments.has(name)),
    [],
    "every metric received is one of the scrape's instruments",
  );
  for (const name of ['gen_ai.client.operation.duration', 'gen_ai.client.token.usage', 'mmif_requests', 'mmif_samples', 'mmif_shard_commits', 'mmif_shard_commit_duration'])
    assert.ok(received.has(name), `${name} in ${[...received.keys()].join(', ')}`);
  assert.equal(received.get('gen_ai.client.operation.duration')![0]!.unit, 's');
  const imaged = last('mmif_samples', (a) => a.build === BUILD && a.stage === 'image').reduce((n, p) => n + p.value, 0);
  assert.equal(imaged, report.counts.planned, 'every planned sample through the image stage once');
  const attempts = last('gen_ai.client.operation.duration', (a) => a.build === BUILD);
  assert.ok(
    attempts.length > 0 && attempts.every((p) => p.attributes['gen_ai.request.model'] === MODEL && p.attributes['server.address'] === '127.0.0.1'),
    JSON.stringify(attempts[0]),
  );
});
