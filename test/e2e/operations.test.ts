/**
 * Operating builds against real components: outages of the model endpoint and of the object store
 * (versitygw on 127.0.0.1), failed shards resumed in each documented way, re-runs that cost and
 * write nothing, cancellation, and schedules created with the `mmif` CLI.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import type { BuildConfigInput } from '../../config/buildConfig.js';
import { temporalCliPath } from '../../local/tools.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { LocalStore } from '../../storage/localStore.js';
import { openStore } from '../../storage/openStore.js';
import type { BuildProgress } from '../../workflows/buildProgress.js';
import { writeCc3m } from '../fixtures/cc3m.js';
import { assertAccounting, assertCommittedShardsIntact, eventually, mtimesOf } from '../harness/datasetChecks.js';
import { mmif } from '../harness/mmifCli.js';
import { startS3Server, useS3Env, type S3Server } from '../harness/s3Server.js';
import { startStack, type Stack } from '../harness/stack.js';
import { captureLogs } from '../harness/canaryScan.js';

let stack: Stack;
let s3: S3Server;
let dir: string;
const FAST_RETRY = { maximumAttempts: 30, initialIntervalSeconds: 0.5, maximumIntervalSeconds: 1, heartbeatTimeoutSeconds: 10 };

before(async () => {
  [stack, s3] = await Promise.all([startStack({ simulator: { seed: 21 }, taskQueue: 'mmif-ops' }), startS3Server()]);
  useS3Env(s3);
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-ops-'));
  await writeCc3m(new LocalStore(path.join(dir, 'cc3m')), 'files', { perShard: 3, shards: 2 });
});

after(async () => {
  await stack?.stop();
  await s3?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function config(buildId: string, overrides: Partial<BuildConfigInput> = {}): BuildConfigInput {
  return {
    buildId,
    seed: 3,
    output: path.join(dir, 'out', buildId),
    sources: [{ type: 'cc3m', uri: path.join(dir, 'cc3m') }],
    maxSamples: 6,
    shardSize: 2,
    sliceSize: 2,
    llm: { timeoutMs: 1500, retry: { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 400 } },
    retry: FAST_RETRY,
    models: { default: { model: 'mmif-sim-vlm' } },
    ...overrides,
  };
}

function start(workflowId: string, input: BuildConfigInput) {
  return stack.client.workflow.start('buildDataset', { taskQueue: stack.taskQueue, workflowId, args: [input] });
}

async function withFaults<T>(faults: Parameters<Stack['simulator']['setFaults']>[0], work: () => Promise<T>): Promise<T> {
  stack.simulator.setFaults(faults);
  try {
    return await work();
  } finally {
    stack.simulator.setFaults({ rate500: 0, rateHang: 0, latencyMs: 0 });
  }
}

test('an endpoint outage (500s, then hangs) is ridden out: every shard commits', async () => {
  const handle = await start('outage-endpoint', config('outage-endpoint'));
  const fiveHundreds = () => stack.simulator.stats().byStatus['500'] ?? 0;
  const before = fiveHundreds();
  stack.simulator.setFaults({ rate500: 1 });
  await eventually(() => fiveHundreds() >= before + 5, 60_000, 'calls answered 500');
  const hangsFrom = stack.simulator.stats().requests;
  stack.simulator.setFaults({ rate500: 0, rateHang: 1, hangMs: 60_000 });
  // Requests hang for a minute: one that has ended was given up by the client at its timeout.
  await eventually(
    () => {
      const { requests, inFlight } = stack.simulator.stats();
      return requests - hangsFrom > inFlight;
    },
    60_000,
    'a hung call given up at its timeout',
  );
  stack.simulator.setFaults({ rateHang: 0 });
  const report = (await handle.result()) as BuildReport;
  assert.deepEqual(report.shards, { planned: 3, committed: 3, failed: 0 });
  assert.ok(stack.simulator.stats().byStatus['500']! > 0, 'the outage really happened');
});

test('an object-store outage during uploads: shards retry, commit whole, none half-committed', async () => {
  const s3Options = { endpoint: s3.endpoint, region: s3.region, forcePathStyle: true };
  const output = `s3://${s3.bucket}/outage`;
  await withFaults({ latencyMs: 100 }, async () => {
    const handle = await start('outage-store', config('outage-store', { output, s3: s3Options }));
    const requests = stack.simulator.stats().requests;
    await eventually(() => stack.simulator.stats().requests > requests + 10, 30_000, 'the build to be under way');
    await s3.kill();
    await eventually(() => anActivityFailed(handle), 60_000, 'an activity failing against the stopped store');
    await s3.restart();
    const report = (await handle.result()) as BuildReport;
    assert.deepEqual(report.shards, { planned: 3, committed: 3, failed: 0 });
  });
  const sums = await assertCommittedShardsIntact(openStore(output, s3Options), 'outage-store', 3);
  assert.equal(sums.size, 15);
});

/** Whether an activity of one of the build's shard workflows has failed an attempt (and waits to be retried). */
async function anActivityFailed(handle: WorkflowHandle): Promise<boolean> {
  for (const child of (await handle.describe()).raw.pendingChildren ?? []) {
    const shard = await stack.client.workflow.getHandle(child.workflowId!).describe();
    if ((shard.raw.pendingActivities ?? []).some((activity) => activity.lastFailure)) return true;
  }
  return false;
}

/** Runs a build whose endpoint fails from the start; resolves once every shard has failed. */
async function failingBuild(buildId: string, overrides: Partial<BuildConfigInput> = {}) {
  stack.simulator.setFaults({ rate500: 1 });
  const retry = { ...FAST_RETRY, maximumAttempts: 2 };
  const handle = await start(buildId, config(buildId, { maxSamples: 4, retry, ...overrides }));
  return handle;
}

test('after retries are exhausted the build fails listing its shards; `mmif resume` re-runs only those', async () => {
  // One shard commits first, then the endpoint goes down for the rest.
  const handle = await start('resume-cli', config('resume-cli', { maxParallelShards: 1, retry: { ...FAST_RETRY, maximumAttempts: 2 } }));
  await eventually(async () => (await handle.query<BuildProgress>('progress')).shards.committed >= 1, 60_000, 'a first committed shard');
  stack.simulator.setFaults({ rate500: 1 });
  await assert.rejects(handle.result(), (err: unknown) => {
    assert.ok(err instanceof WorkflowFailedError);
    assert.match(err.cause!.message, /^[12] of 3 shards failed \(report: .*build-report\.json\): shard \d/);
    return true;
  });
  stack.simulator.setFaults({ rate500: 0 });
  const store = new LocalStore(path.join(dir, 'out', 'resume-cli'));
  const before = await assertCommittedShardsIntact(store, 'resume-cli', 3);
  const mtimes = await mtimesOf(path.join(dir, 'out', 'resume-cli', 'resume-cli', 'instruct'));

  const resumed = await mmif(stack, 'resume', 'resume-cli', '--wait');
  assert.equal(resumed.code, 0, resumed.stderr + resumed.stdout);
  assert.match(resumed.stdout, /restarted resume-cli \(was FAILED/);
  const after = await assertCommittedShardsIntact(store, 'resume-cli', 3);
  assert.equal(after.size, 15);
  for (const [file, sum] of before) assert.equal(after.get(file), sum, `${file} untouched`);
  const mtimesAfter = await mtimesOf(path.join(dir, 'out', 'resume-cli', 'resume-cli', 'instruct'));
  for (const [file, mtime] of mtimes) assert.equal(mtimesAfter.get(file), mtime, `${file} not rewritten`);
});

test('a build waiting in its retry window takes the retryFailedShards update (via `mmif resume`)', async () => {
  const handle = await failingBuild('resume-update', { retryWindowSeconds: 300 });
  await eventually(async () => (await handle.query<BuildProgress>('progress')).phase === 'waiting-for-retry', 60_000, 'the retry window');
  stack.simulator.setFaults({ rate500: 0 });
  const resumed = await mmif(stack, 'resume', 'resume-update');
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.match(resumed.stdout, /retrying shards 0, 1 of resume-update/);
  const report = (await handle.result()) as BuildReport;
  assert.deepEqual(report.shards, { planned: 2, committed: 2, failed: 0 });
});

test('a failed build re-runs with `temporal workflow start --id-reuse-policy AllowDuplicateFailedOnly`', async () => {
  const input = config('resume-temporal', { maxSamples: 4, retry: { ...FAST_RETRY, maximumAttempts: 2 } });
  const handle = await failingBuild('resume-temporal');
  await assert.rejects(handle.result(), WorkflowFailedError);
  stack.simulator.setFaults({ rate500: 0 });
  const file = path.join(dir, 'resume-temporal.json');
  await writeFile(file, JSON.stringify(input));
  await promisify(execFile)(temporalCliPath(), [
    'workflow',
    'start',
    '--type',
    'buildDataset',
    '--task-queue',
    stack.taskQueue,
    '--workflow-id',
    'resume-temporal',
    '--input-file',
    file,
    '--id-reuse-policy',
    'AllowDuplicateFailedOnly',
    '--address',
    stack.server.address,
  ]);
  const report = (await stack.client.workflow.getHandle('resume-temporal').result()) as BuildReport;
  assert.deepEqual(report.shards, { planned: 2, committed: 2, failed: 0 });
});

test('re-running a completed build makes zero model calls and writes nothing', async () => {
  const input = config('rerun', { searchAttributes: true });
  await (await start('rerun', input)).result();
  const root = path.join(dir, 'out', 'rerun');
  const before = await mtimesOf(root);
  const requests = stack.simulator.stats().requests;
  const report = (await (await start('rerun', input)).result()) as BuildReport;
  assert.equal(report.shards.committed, 3);
  assert.equal(stack.simulator.stats().requests, requests, 'no model call');
  assert.deepEqual(await mtimesOf(root), before, 'no object written or rewritten');

  // Search attributes let the UI and `temporal workflow list --query` filter builds.
  const found = async () => {
    const ids: string[] = [];
    for await (const w of stack.client.workflow.list({ query: `MmifBuildId = 'rerun' AND MmifStatus = 'done' AND MmifSource = 'cc3m'` })) ids.push(w.workflowId);
    return ids.sort();
  };
  await eventually(async () => (await found()).length === 2, 20_000, 'both runs to be visible by search attribute');
  assert.deepEqual(await found(), ['rerun', 'rerun'], 'both runs of the build, under its buildId');
});

test('cancelling a build stops it; committed shards stay valid and the report says what was committed', async () => {
  await withFaults({ latencyMs: 150 }, async () => {
    const handle = await start('cancel-me', config('cancel-me', { maxParallelShards: 1 }));
    await eventually(async () => (await handle.query<BuildProgress>('progress')).shards.committed >= 1, 60_000, 'a committed shard');
    const cancelled = await mmif(stack, 'cancel', 'cancel-me');
    assert.equal(cancelled.code, 0, cancelled.stderr);
    await assert.rejects(handle.result(), (err: unknown) => err instanceof WorkflowFailedError && /cancel/i.test(String(err.cause?.message ?? err.cause?.name)));
  });
  const store = new LocalStore(path.join(dir, 'out', 'cancel-me'));
  const report = JSON.parse((await store.get(buildLayout('cancel-me').report))!.toString()) as BuildReport;
  assert.ok(report.shards.committed >= 1 && report.shards.committed < 3, JSON.stringify(report.shards));
  assert.equal((await assertCommittedShardsIntact(store, 'cancel-me', 3)).size, report.shards.committed * 5);
  // The samples of the shards the cancel stopped are accounted for as uncommitted.
  await assertAccounting(store, report);
  assert.ok(report.accounting[0]!.uncommitted > 0, JSON.stringify(report.accounting));
});

test('after `mmif cancel` the running slice stops calling the endpoint: in-flight activities abort their calls', async () => {
  // One long slice per shard, one call at a time, slow replies: without cancellation reaching the
  // model calls, the running activities would keep calling the endpoint for the rest of their slice.
  const source = path.join(dir, 'cc3m-long');
  await writeCc3m(new LocalStore(source), 'files', { perShard: 24, shards: 1 });
  const input = config('cancel-spend', {
    sources: [{ type: 'cc3m', uri: source }],
    maxSamples: 24,
    shardSize: 24,
    sliceSize: 24,
    llm: { timeoutMs: 5000, concurrency: 1, retry: { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 400 } },
  });
  await withFaults({ latencyMs: 500 }, async () => {
    const before = stack.simulator.stats().requests;
    const handle = await start('cancel-spend', input);
    await eventually(async () => stack.simulator.stats().requests >= before + 4, 60_000, 'model calls under way');
    const cancelled = await mmif(stack, 'cancel', 'cancel-spend');
    assert.equal(cancelled.code, 0, cancelled.stderr);
    const atCancel = stack.simulator.stats().requests;
    await assert.rejects(handle.result());
    // The cancellation reaches the running activity with its next heartbeat; it aborts its call and
    // ends. Once no activity runs, nothing of this build can call the endpoint any more.
    await eventually(() => stack.activitiesInFlight() === 0 && stack.simulator.stats().inFlight === 0, 60_000, 'the activities to end');
    const sent = stack.simulator.stats().requests - atCancel;
    // Without the abort, the slice would go on with all its remaining samples, each at least its
    // instruction and constraint calls. How many calls still go out while the cancellation travels
    // (the next heartbeat's answer) depends on the machine's load, so that is not what is asserted.
    const remaining = 24 - 4;
    assert.ok(sent < remaining * 2, `${sent} requests reached the endpoint after the build was cancelled`);
  });
});

test('a key echoed by the endpoint in its error bodies reaches no output file, report or workflow history: it is masked', async () => {
  const CANARY = 'sk-canary-5f3a9c17e2d84b06';
  process.env.MMIF_CANARY_KEY = CANARY;
  const output = path.join(dir, 'out', 'canary');
  const input = config('canary', {
    output,
    retry: { ...FAST_RETRY, maximumAttempts: 2 },
    llm: { timeoutMs: 1500, preflight: false, retry: { maxAttempts: 2, baseDelayMs: 50, maxDelayMs: 100 } },
    models: { default: { model: 'mmif-sim-vlm', apiKeyEnv: 'MMIF_CANARY_KEY' } },
  });
  // The worker runs in this process: what it logs passes through its stdout and stderr.
  const captured = captureLogs();
  try {
    // Every chat request answered 500 with the key in the message: the shards fail with the error text.
    await withFaults({ rate500: 1, echoKeyInErrors: true }, () => assert.rejects(start('canary', input).then((h) => h.result())));
  } finally {
    captured.stop();
    stack.simulator.setFaults({ echoKeyInErrors: false });
    delete process.env.MMIF_CANARY_KEY;
  }
  const logs = captured.text();
  // A 5xx's text is masked where its line is made (llm/endpointError.ts maskedExcerpt: the key blanked).
  assert.match(logs, /request key: \*\*\*/, 'the worker logged the failures');
  assert.ok(!logs.includes(CANARY), 'the key is in the worker log');
  const files = await readdir(output, { recursive: true, withFileTypes: true });
  let texts = '';
  for (const f of files.filter((e) => e.isFile())) texts += (await readFile(path.join(f.parentPath, f.name))).toString('latin1');
  const run = promisify(execFile);
  const show = (id: string) => run(temporalCliPath(), ['workflow', 'show', '--workflow-id', id, '--output', 'json', '--address', stack.server.address], { maxBuffer: 64 << 20 });
  const histories = (await Promise.all(['canary', 'canary/shard-0', 'canary/shard-1', 'canary/shard-2'].map(show))).map((r) => r.stdout).join('\n');
  const report = JSON.parse((await new LocalStore(output).get(buildLayout('canary').report))!.toString()) as BuildReport;
  assert.equal(report.failedShards.length, 3, 'every shard failed on the echoing endpoint');
  // The echo was there to mask: the error text carries the blank instead of the value.
  assert.match(JSON.stringify(report.failedShards), /request key: \*\*\*/);
  assert.match(histories, /request key: \*\*\*/);
  assert.ok(!texts.includes(CANARY), 'the key is in an output file');
  assert.ok(!histories.includes(CANARY), 'the key is in a workflow history');
});

test('a config that does not parse fails the build at once, non-retryably, naming the field', async () => {
  // The workflow parses its input with the config modules it imports on demand (workflows/configInput.ts).
  const input = { ...config('bad-config'), shardSize: -1 } as BuildConfigInput;
  const failure = await start('bad-config', input)
    .then((h) => h.result())
    .then(
      () => assert.fail('the build succeeded'),
      (err: unknown) => err,
    );
  assert.ok(failure instanceof WorkflowFailedError);
  const cause = failure.cause as { message?: string; type?: string; nonRetryable?: boolean } | undefined;
  assert.match(String(cause?.message), /^invalid build config: shardSize: /);
  assert.equal(cause?.type, 'ConfigError');
  assert.equal(cause?.nonRetryable, true);
});

test('an output that cannot be written fails the build in seconds, non-retryably, naming the location: missing bucket, read-only, under a file, under /proc', async () => {
  const file = path.join(dir, 'a-file');
  await writeFile(file, 'not a directory');
  const s3Options = { endpoint: s3.endpoint, region: s3.region, forcePathStyle: true };
  const cases = [
    { name: 'missing bucket', output: 's3://mmif-no-such-bucket/out', s3: s3Options, message: /output s3:\/\/mmif-no-such-bucket\/out is not writable: NoSuchBucket/ },
    { name: 'read-only (sysfs)', output: '/sys/mmif-out', message: /output \/sys\/mmif-out is not writable: E[A-Z]+/ },
    { name: 'under a file', output: path.join(file, 'out'), message: /is not writable: ENOTDIR: a part of the path is a file/ },
    // Node's recursive mkdir spins forever here; before the probe, each attempt spun a core.
    { name: 'under /proc', output: '/proc/mmif-out', message: /output \/proc\/mmif-out is not writable: ENOENT/ },
  ];
  for (const [i, c] of cases.entries()) {
    const buildId = `bad-output-${i}`;
    const failure = await start(buildId, config(buildId, { output: c.output, ...(c.s3 ? { s3: c.s3 } : {}) }))
      .then((h) => h.result())
      .then(
        () => assert.fail(`${c.name}: the build succeeded`),
        (err: unknown) => err,
      );
    let cause = (failure as { cause?: unknown }).cause as { message?: string; cause?: unknown; nonRetryable?: boolean } | undefined;
    while (cause?.cause) cause = cause.cause as typeof cause;
    assert.match(String(cause?.message), c.message, c.name);
    assert.equal(cause?.nonRetryable, true, `${c.name}: non-retryable`);
  }
});

test('a schedule created with `mmif schedule` runs builds under dated prefixes sharing one model cache', async () => {
  const file = path.join(dir, 'nightly.json');
  await writeFile(file, JSON.stringify(config('nightly', { output: path.join(dir, 'out', 'nightly') })));
  const created = await mmif(stack, 'schedule', 'create', 'nightly', '--config', file, '--cron', '0 3 * * *');
  assert.equal(created.code, 0, created.stderr);
  assert.match((await mmif(stack, 'schedule', 'list')).stdout, /^nightly {2}active/m);

  assert.equal((await mmif(stack, 'schedule', 'trigger', 'nightly')).code, 0);
  const today = new Date().toISOString().slice(0, 10);
  const report = (key: string) => new LocalStore(path.join(dir, 'out', 'nightly')).get(key);
  await eventually(async () => Boolean(await report(`${today}/nightly/build-report.json`)), 60_000, "today's scheduled build");

  // A backfill for a past night lands under that night's date, and costs no model call: same samples, shared cache.
  const requests = stack.simulator.stats().requests;
  const backfill = await mmif(stack, 'schedule', 'backfill', 'nightly', '--start', '2026-11-01T00:00:00Z', '--end', '2026-11-01T12:00:00Z');
  assert.equal(backfill.code, 0, backfill.stderr);
  await eventually(async () => Boolean(await report('2026-11-01/nightly/build-report.json')), 60_000, 'the backfilled build');
  assert.equal(stack.simulator.stats().requests, requests);

  assert.match((await mmif(stack, 'schedule', 'describe', 'nightly')).stdout, /^ {2}when: {5}calendar 0 3 \* \* \* in UTC$/m);
  assert.equal((await mmif(stack, 'schedule', 'pause', 'nightly')).code, 0);
  assert.match((await mmif(stack, 'schedule', 'list')).stdout, /^nightly {2}paused/m);
  assert.equal((await mmif(stack, 'schedule', 'delete', 'nightly')).code, 0);
  assert.equal((await mmif(stack, 'schedule', 'trigger', 'nightly')).code, 3, 'a deleted schedule is not found');
});

test('a 3-day backfill and a manual run of the same buildId run concurrently without colliding: every date has a full report', async () => {
  // Before shard ids were derived from the parent's workflow id, all dated runs started children
  // `<buildId>/shard-N` and all but one failed with "Workflow execution already started".
  const file = path.join(dir, 'weekly.json');
  const output = path.join(dir, 'out', 'weekly');
  await writeFile(file, JSON.stringify(config('weekly', { output })));
  assert.equal((await mmif(stack, 'schedule', 'create', 'weekly', '--config', file, '--cron', '0 3 * * *')).code, 0);
  const reportOf = async (key: string) => {
    const bytes = await new LocalStore(output).get(key);
    return bytes ? (JSON.parse(bytes.toString()) as BuildReport) : undefined;
  };
  await withFaults({ latencyMs: 100 }, async () => {
    const backfill = await mmif(stack, 'schedule', 'backfill', 'weekly', '--start', '2026-11-01T00:00:00Z', '--end', '2026-11-04T00:00:00Z');
    assert.equal(backfill.code, 0, backfill.stderr);
    // The manual build (workflow id = buildId) overlaps the dated runs.
    const manual = await start('weekly', config('weekly', { output }));
    await manual.result();
    const dates = ['2026-11-01', '2026-11-02', '2026-11-03'];
    await eventually(async () => (await Promise.all(dates.map((d) => reportOf(`${d}/weekly/build-report.json`)))).every(Boolean), 120_000, 'three backfilled reports');
    for (const key of [...dates.map((d) => `${d}/weekly/build-report.json`), 'weekly/build-report.json']) {
      const report = (await reportOf(key))!;
      assert.deepEqual(report.failedShards, [], `${key}: ${JSON.stringify(report.failedShards)}`);
      assert.equal(report.shards.committed, 3, key);
    }
  });
  const describe = JSON.parse((await mmif(stack, 'schedule', 'describe', 'weekly', '--json')).stdout) as { recentActions: unknown[] };
  assert.equal(describe.recentActions.length, 3);
  assert.equal((await mmif(stack, 'schedule', 'delete', 'weekly')).code, 0);
});

test('`mmif build --wait` runs a build; a changed config is refused unless --new-version; `mmif status` reports it', async () => {
  const file = path.join(dir, 'cli-build.json');
  await writeFile(file, JSON.stringify(config('cli-build')));
  const built = await mmif(stack, 'build', '--config', file, '--wait');
  assert.equal(built.code, 0, built.stderr);
  assert.match(built.stdout, /build cli-build: COMPLETED/);

  const status = await mmif(stack, 'status', 'cli-build');
  assert.equal(status.code, 0, status.stderr);
  assert.match(status.stdout, /cli-build done[\s\S]*3\/3 shards, 0 running, 0 failed[\s\S]*samples: \d+ accepted/);
  const progress = JSON.parse((await mmif(stack, 'status', 'cli-build', '--json')).stdout) as BuildProgress;
  assert.equal(progress.shards.committed, 3);
  assert.ok(progress.usage.answer!.requests > 0);

  await writeFile(file, JSON.stringify(config('cli-build', { seed: 99 })));
  const refused = await mmif(stack, 'build', '--config', file, '--wait');
  assert.equal(refused.code, 2, 'the changed config is refused before anything starts, a config error');
  assert.match(refused.stderr, /^mmif: checks failed: build 'cli-build' already exists in .* with a different config .*new buildId/m);
  // Started around the CLI (`temporal workflow start`), the workflow refuses it itself.
  const changed = await stack.client.workflow.start('buildDataset', { taskQueue: stack.taskQueue, workflowId: 'cli-build', args: [config('cli-build', { seed: 99 })] });
  const failure = (await changed.result().catch((err: unknown) => err)) as WorkflowFailedError;
  const cause = failure.cause as Error & { cause?: Error };
  assert.match(String(cause.cause?.message), /different config.*new buildId/);
  // Resuming the refused build re-runs the build as planned, not the refused change.
  const resumed = await mmif(stack, 'resume', 'cli-build', '--wait');
  assert.equal(resumed.code, 0, resumed.stdout + resumed.stderr);
  assert.match(resumed.stdout, /refused for a changed config: resuming with the config it was planned with/);

  const versioned = await mmif(stack, 'build', '--config', file, '--new-version', '--wait');
  assert.equal(versioned.code, 0, versioned.stderr);
  assert.match(versioned.stdout, /started build cli-build-v2/);

  assert.equal((await mmif(stack, 'status', 'no-such-build')).code, 3);
  assert.equal((await mmif(stack, 'build')).code, 2);
});

test('SIGTERM stops an `mmif worker` without waiting out the 2-minute Retry-After its requests wait on', async () => {
  // A separate process, as production runs it (node itself: a tsx wrapper would not pass the signal on).
  const cli = fileURLToPath(new URL('../../cli/mmif.ts', import.meta.url));
  const taskQueue = 'mmif-sigterm';
  const worker = spawn(process.execPath, ['--import', 'tsx', cli, 'worker'], {
    env: { ...process.env, TEMPORAL_ADDRESS: stack.server.address, MMIF_TASK_QUEUE: taskQueue, OPENAI_BASE_URL: stack.simulator.url },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => worker.once('exit', (code) => resolve(code)));
  try {
    await new Promise<void>((resolve, reject) => {
      worker.stdout!.on('data', (d: Buffer) => d.toString().includes('worker polling') && resolve());
      void exited.then((code) => reject(new Error(`worker exited early (${code})`)));
    });
    await withFaults({ rate429: 1, retryAfterSeconds: 120 }, async () => {
      const before = stack.simulator.stats().byStatus['429'] ?? 0;
      // One request in flight at a time: once the first 429 is answered, every other call waits in the
      // worker's limiter for the endpoint's Retry-After (with more, some sent with the first would
      // still be on their way when the count below is taken).
      const input = config('sigterm', { llm: { preflight: false }, models: { default: { model: 'mmif-sim-vlm', concurrency: 1 } } });
      const handle = await stack.client.workflow.start('buildDataset', { taskQueue, workflowId: 'sigterm', args: [input] });
      await eventually(() => (stack.simulator.stats().byStatus['429'] ?? 0) > before, 60_000, 'a rate-limited request');
      const sent = stack.simulator.stats().requests;
      worker.kill('SIGTERM');
      const code = await exited;
      assert.equal(code, 0, `worker after SIGTERM: ${code}`);
      // Waiting out the Retry-After would have sent the requests again before exiting.
      assert.equal(stack.simulator.stats().requests, sent, 'no request went out between SIGTERM and exit');
      await handle.terminate('test over');
    });
  } finally {
    if (worker.exitCode === null && worker.signalCode === null) worker.kill('SIGKILL');
  }
});
