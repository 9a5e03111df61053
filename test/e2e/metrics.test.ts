/**
 * Metrics as an operator sees them: `mmif worker --metrics` in a process of its own, a real Prometheus
 * (Debian's, tools/install.sh) scraping it every second during a six-source build against the
 * simulator (a few 429s injected, 200 ms a reply so the 1 s scrapes find requests in flight, prices
 * set so cost is not zero), and the PromQL queries that
 * docs/operations.md gives, read from that page and run through Prometheus's HTTP API: their values
 * are checked against the build report and the simulator's own counts. The scrape is also checked for
 * bounded labels (every label value from a known, small set) and for the worker's API key in any form.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import type { BuildConfigInput } from '../../config/buildConfig.js';
import { MODEL_ROLES } from '../../config/modelsConfig.js';
import { ALL_STAGE_NAMES } from '../../config/stages.js';
import { freePort, startTemporalDevServer, stopProcess, type DevServer } from '../../local/temporalDevServer.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import { startSimulator, type SimulatorHandle } from '../../simulator/server.js';
import { LocalStore } from '../../storage/localStore.js';
import { maskingDataConverter } from '../../worker/maskingPayloadCodec.js';
import { writeAllava } from '../fixtures/allava.js';
import { writeCc3m } from '../fixtures/cc3m.js';
import { writeChartqa } from '../fixtures/chartqa.js';
import { writeGeo170k } from '../fixtures/geo170k.js';
import { mixedSources } from '../fixtures/mixedSources.js';
import { writeMultiui } from '../fixtures/multiui.js';
import { writeRico } from '../fixtures/rico.js';
import { leaks } from '../harness/canaryScan.js';
import { runMmif, startWorkerProcess } from '../harness/mmifCli.js';
import { startPrometheus, type Prometheus } from '../harness/prometheus.js';

const TASK_QUEUE = 'mmif-metrics';
const CANARY = 'sk-canary-metrics-7d1e40b9c2';
const SOURCES = ['cc3m', 'allava', 'chartqa', 'geo170k', 'rico', 'multiui'];
const MODEL = 'mmif-sim-vlm';

let dir: string;
let server: DevServer;
let simulator: SimulatorHandle;
let worker: ChildProcess;
let metricsAt: string;
let prometheus: Prometheus;
let connection: Connection;

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-metrics-'));
  const at = (name: string) => new LocalStore(path.join(dir, name));
  await Promise.all([
    writeCc3m(at('cc3m'), 'files', { perShard: 3, shards: 1 }),
    writeAllava(at('allava')),
    writeChartqa(at('chartqa')),
    writeGeo170k(at('geo170k')),
    writeRico(at('rico')),
    writeMultiui(at('multiui')),
  ]);
  [server, simulator] = await Promise.all([startTemporalDevServer(), startSimulator({ seed: 3, faults: { rate429: 0.03, latencyMs: 200 } })]);
  metricsAt = `127.0.0.1:${await freePort()}`;
  worker = await startWorkerProcess({ temporalAddress: server.address, taskQueue: TASK_QUEUE, baseUrl: simulator.url, more: { OPENAI_API_KEY: CANARY } }, ['--metrics', metricsAt]);
  prometheus = await startPrometheus([metricsAt]);
  connection = await Connection.connect({ address: server.address });
});

after(async () => {
  await connection?.close();
  await prometheus?.stop();
  if (worker) await stopProcess(worker);
  await simulator?.close();
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The queries of docs/operations.md's promql block, by their comment line. */
async function docsQueries(build: string): Promise<Map<string, string>> {
  const page = await readFile(fileURLToPath(new URL('../../docs/operations.md', import.meta.url)), 'utf8');
  const block = /```promql\n([\s\S]*?)```/.exec(page)?.[1];
  assert.ok(block, 'docs/operations.md has a promql block');
  const queries = new Map<string, string>();
  const lines = block.trim().split('\n');
  for (let i = 0; i + 1 < lines.length; i += 2) queries.set(lines[i]!.replace(/^#\s*/, ''), lines[i + 1]!.replaceAll('$build', build));
  return queries;
}

function query(queries: Map<string, string>, startingWith: string): string {
  const found = [...queries].find(([name]) => name.startsWith(startingWith));
  assert.ok(found, `docs/operations.md gives a query for ${startingWith}`);
  return found[1];
}

const one = async (promql: string) => {
  const result = await prometheus.query(promql);
  assert.equal(result.length, 1, `${promql}: one value, got ${JSON.stringify(result)}`);
  return result[0]!.value;
};

test("the docs' PromQL queries answer during a six-source build with the build report's values", async () => {
  const buildId = 'metrics-six';
  const config: BuildConfigInput = {
    buildId,
    seed: 1,
    output: path.join(dir, 'out'),
    sources: mixedSources(dir),
    maxSamples: 30,
    shardSize: 4,
    models: { default: { model: MODEL } },
    llm: { prices: { [MODEL]: { inputPerMTok: 2, outputPerMTok: 8 } } },
  };
  const client = new Client({ connection, dataConverter: maskingDataConverter });
  const report = (await client.workflow.execute('buildDataset', { taskQueue: TASK_QUEUE, workflowId: buildId, args: [config] })) as BuildReport;
  const ended = Date.now() / 1000;
  assert.equal(report.shards.failed, 0);
  assert.ok(report.counts.instruct > 0 && report.cost.usd > 0, 'the build accepted records at a price');
  // Prometheus has scraped the worker since the build ended: its counters are final there.
  while ((await one('max(timestamp(up{job="mmif"} == 1))')) <= ended + 1) await new Promise((r) => setTimeout(r, 250));

  const queries = await docsQueries(buildId);
  const sim = simulator.stats();

  // Cost per accepted record: exactly the report's.
  const perRecord = await one(query(queries, 'cost per accepted record'));
  assert.ok(Math.abs(perRecord - report.cost.perSftRecord!) <= 1e-9 * report.cost.perSftRecord!, `cost per record ${perRecord} vs report ${report.cost.perSftRecord}`);

  // Samples per minute, by stage: stages of the build moved (a stage whose series was born with its
  // final count, all its samples done before one scrape, shows no rate: Prometheus has no earlier
  // value to count from); the totals behind the rate are the report's.
  const perMinute = await prometheus.query(query(queries, 'samples per minute'));
  const stagesMoved = perMinute.filter((s) => s.value > 0).map((s) => s.metric.stage!);
  const stagesRun = new Set((await prometheus.query(`sum by (stage) (mmif_samples_total{build="${buildId}"})`)).map((s) => s.metric.stage));
  assert.ok(stagesMoved.length > 0 && stagesMoved.every((stage) => stagesRun.has(stage)), JSON.stringify(perMinute));
  assert.ok(stagesRun.has('image') && stagesRun.has('answer'), [...stagesRun].join());
  assert.equal(await one(`sum(mmif_samples_total{build="${buildId}",stage="image"})`), report.counts.planned, 'every planned sample went through the image stage once');
  const rejectedAt = await prometheus.query(`sum by (stage) (mmif_samples_total{build="${buildId}",outcome="rejected"})`);
  for (const { metric, value } of rejectedAt) assert.equal(value, report.rejectsByStage[metric.stage!] ?? 0, `rejections at ${metric.stage}`);

  // Error rate by class: the 429s the simulator served, over every attempt it answered.
  const errorRate = await prometheus.query(query(queries, 'error rate by class'));
  const limited = errorRate.find((s) => s.metric.class === 'rate-limited');
  assert.ok(limited && limited.value > 0 && limited.value < 1, JSON.stringify(errorRate));
  assert.equal(await one(`sum(mmif_requests_total{build="${buildId}"})`), sim.requests, 'every attempt the simulator saw is counted once');
  assert.equal(await one(`sum(mmif_request_errors_total{build="${buildId}",class="rate-limited"})`), sim.byStatus['429'] ?? 0);
  const paid = Object.values(report.usage).reduce((n, u) => n + u.requests - u.cachedRequests - u.batchRequests, 0);
  assert.equal(await one(`sum(mmif_requests_total{build="${buildId}",status_class="2xx"})`), paid, "answered attempts are the report's paid requests");
  const tokens = await one(`sum(gen_ai_client_token_usage_sum{build="${buildId}",gen_ai_token_type="input"})`);
  assert.equal(tokens, sim.promptTokens, 'input tokens are those the simulator counted');

  // Endpoint saturation: a share of the limit, reached above zero.
  const saturation = await prometheus.query(query(queries, 'endpoint saturation'));
  assert.ok(saturation.length > 0 && saturation.every((s) => s.value > 0 && s.value <= 1), JSON.stringify(saturation));

  // Bounded labels: every value of every engine series comes from a small known set.
  const scrape = await (await fetch(`http://${metricsAt}/metrics`)).text();
  assert.deepEqual(leaks(scrape, CANARY), [], 'the API key appears in no label or value');
  assert.match(scrape, /^temporal_/m, "the SDK's own metrics are on the same target");
  const allowed: Record<string, (v: string) => boolean> = {
    build: (v) => v === buildId,
    source: (v) => SOURCES.includes(v),
    stage: (v) => (ALL_STAGE_NAMES as readonly string[]).includes(v),
    role: (v) => v === 'preflight' || (MODEL_ROLES as readonly string[]).includes(v),
    endpoint: (v) => v === simulator.url,
    model: (v) => v === MODEL,
    gen_ai_request_model: (v) => v === MODEL,
    server_address: (v) => v === '127.0.0.1',
    gen_ai_operation_name: (v) => v === 'chat',
    gen_ai_provider_name: (v) => v === 'openai',
    gen_ai_token_type: (v) => ['input', 'output', 'cached', 'reasoning'].includes(v),
    outcome: (v) => ['ok', 'rejected'].includes(v),
    reason: (v) => /^[a-z0-9-]{1,40}$/.test(v),
    status_class: (v) => ['2xx', '4xx', '5xx', 'network'].includes(v),
    class: (v) => ['rate-limited', 'transient', 'refused', 'unusable', 'permanent', 'fatal'].includes(v),
    error_type: (v) => ['', 'rate-limited', 'transient', 'refused', 'unusable', 'permanent', 'fatal'].includes(v),
    le: () => true,
  };
  const series = scrape.split('\n').filter((l) => /^(mmif_|gen_ai_)/.test(l));
  const reasons = new Set<string>();
  for (const line of series) {
    for (const [, name, value] of line.matchAll(/([a-z_]+)="([^"]*)"/g)) {
      assert.ok(allowed[name!]?.(value!), `label ${name}="${value}" in ${line}`);
      if (name === 'reason') reasons.add(value!);
    }
  }
  assert.ok(reasons.size <= 20, `reason codes: ${[...reasons].join()}`);
  assert.ok(series.length < 2000, `${series.length} series`);
});

test("`mmif build --local --metrics` serves the in-process worker's metrics, the engine's and the SDK's, while the build runs", async () => {
  const port = await freePort();
  const file = path.join(dir, 'local.json');
  const local = {
    buildId: 'metrics-local',
    seed: 2,
    output: path.join(dir, 'out-local'),
    sources: [{ type: 'cc3m', uri: path.join(dir, 'cc3m') }],
    maxSamples: 3,
    shardSize: 3,
    models: { default: { model: MODEL } },
  };
  await writeFile(file, JSON.stringify(local));
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !['OPENAI_BASE_URL', 'TEMPORAL_ADDRESS', 'MMIF_TASK_QUEUE', 'MMIF_METRICS_ADDR'].includes(k)));
  // tsx by its own location: the CLI runs in the test's folder, where `--import tsx` would not resolve.
  const child = spawn(
    process.execPath,
    ['--import', import.meta.resolve('tsx'), fileURLToPath(new URL('../../cli/mmif.ts', import.meta.url)), 'build', '--config', file, '--local', '--metrics', `127.0.0.1:${port}`],
    {
      env,
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let running = true;
  void exited.then(() => (running = false));
  // Scraped until the samples of the running build show (the server ends with the command).
  let seen = '';
  while (running && !/^mmif_samples_total\{build="metrics-local"/m.test(seen)) {
    seen = await fetch(`http://127.0.0.1:${port}/metrics`).then(
      (r) => r.text(),
      () => '',
    );
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(await exited, 0, stdout);
  assert.ok(stdout.includes(`metrics at http://127.0.0.1:${port}/metrics`), stdout);
  assert.match(seen, /^mmif_samples_total\{build="metrics-local",source="cc3m",stage="image",outcome="ok"\} \d+/m);
  assert.match(seen, /^temporal_/m);
});

test('`--metrics` without `--local` and a malformed MMIF_METRICS_ADDR are usage errors, in one line', async () => {
  const noLocal = await runMmif(['build', '--config', 'x.json', '--metrics', '9464']);
  assert.equal(noLocal.code, 2);
  assert.equal(noLocal.stderr.trim(), 'mmif: --metrics serves the metrics of a --local build; a worker serves its own (mmif worker --metrics)');
  const malformed = await runMmif(['worker'], { env: { MMIF_METRICS_ADDR: 'localhost' } });
  assert.equal(malformed.code, 2);
  assert.equal(malformed.stderr.trim(), "mmif: MMIF_METRICS_ADDR must be host:port or a port (e.g. 127.0.0.1:9464), got 'localhost'");
});
