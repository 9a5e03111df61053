/**
 * Every way a build fails reaches the user as one line where they look: `mmif build --wait`,
 * `build --local`, `resume --wait` and `status`, with the exit code the docs give (2 when the cause is
 * a config, data path, output or endpoint setting, else 1). Each case is started wrong as a user
 * would start it, and the exact line is asserted: no stack, no task token, no bare FAILED.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import net from 'node:net';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { BuildRun, noWorkerLine } from '../../cli/buildRun.js';
import { LocalStore } from '../../storage/localStore.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { getJson, putJson } from '../../storage/objectStore.js';
import { sha256Hex } from '../../domain/hashing.js';
import { storedConfigOf } from '../../pipeline/planning/planBuild.js';
import type { StoredConfig } from '../../pipeline/planning/planBuild.types.js';
import { writeCc3m } from '../fixtures/cc3m.js';
import { writeChartqa } from '../fixtures/chartqa.js';
import { mmif, runMmif, type MmifResult } from '../harness/mmifCli.js';
import { closedPort } from '../harness/closedPort.js';
import { startStack, type Stack } from '../harness/stack.js';

let stack: Stack;
const CLI = fileURLToPath(new URL('../../cli/mmif.ts', import.meta.url));
let dir: string;

before(async () => {
  stack = await startStack({ simulator: { seed: 3 }, taskQueue: 'mmif-failures' });
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-failures-'));
  await writeCc3m(new LocalStore(path.join(dir, 'cc3m')), 'flat', { perShard: 2, shards: 1 });
  await writeChartqa(new LocalStore(path.join(dir, 'chartqa')));
});

after(async () => {
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const config = (buildId: string, extra: Record<string, unknown> = {}) => ({
  buildId,
  output: path.join(dir, 'out'),
  sources: [{ type: 'cc3m', uri: path.join(dir, 'cc3m'), layout: 'flat' }],
  maxSamples: 2,
  shardSize: 2,
  image: { minShortSide: 100 },
  models: { default: { model: 'mmif-sim-vlm' } },
  ...extra,
});

async function configFile(buildId: string, extra: Record<string, unknown> = {}): Promise<string> {
  const file = path.join(dir, `${buildId}.json`);
  await writeFile(file, JSON.stringify(config(buildId, extra)));
  return file;
}

/** The command's last stderr line: what the user reads last, and the only line that says why. */
function lastLine(result: MmifResult): string {
  const lines = result.stderr.trim().split('\n');
  return lines[lines.length - 1]!;
}

/** One line, no stack frames, no task token. */
function assertClean(result: MmifResult): void {
  const all = result.stdout + result.stderr;
  assert.doesNotMatch(all, /^\s+at /m, 'no stack trace');
  assert.doesNotMatch(all, /taskToken|task_token/i, 'no task token');
  assert.doesNotMatch(all, /: FAILED$/m, 'no bare FAILED');
}

const cc3mMissing = (root: string) => `${root}: no CC3M dataset found (the root is missing or empty); `;

test('a wrong data path: `mmif build` refuses it on the worker before starting anything, exit 2', async () => {
  const missing = path.join(dir, 'no-such-folder');
  const file = await configFile('wrong-path', { sources: [{ type: 'cc3m', uri: missing }] });
  const built = await mmif(stack, 'build', '--config', file, '--wait');
  assertClean(built);
  assert.equal(built.code, 2, built.stderr);
  assert.ok(lastLine(built).startsWith(`mmif: checks failed: sources[0] (cc3m): ${cc3mMissing(missing)}`), lastLine(built));
  await assert.rejects(stack.client.workflow.getHandle('wrong-path').describe(), 'no build was started');
  // `mmif validate` says the same, here, with nothing started.
  const validated = await mmif(stack, 'validate', '--config', file);
  assert.equal(validated.code, 2);
  assert.ok(lastLine(validated).startsWith(`${file}: sources[0] (cc3m): ${cc3mMissing(missing)}`), lastLine(validated));
});

test('a wrong data path started on Temporal directly: status and resume --wait end with the cause, exit 2', async () => {
  const missing = path.join(dir, 'no-such-folder');
  // As `temporal workflow start` would: no CLI check in front of it.
  const started = await stack.client.workflow.start('buildDataset', {
    taskQueue: stack.taskQueue,
    workflowId: 'wrong-path-wf',
    args: [config('wrong-path-wf', { sources: [{ type: 'cc3m', uri: missing }] })],
  });
  await started.result().catch(() => undefined);
  const line = `mmif: build wrong-path-wf failed: ${cc3mMissing(missing)}`;
  const status = await mmif(stack, 'status', 'wrong-path-wf');
  assertClean(status);
  assert.equal(status.code, 2);
  assert.match(status.stdout, /^wrong-path-wf failed$/m, 'a closed build shows as failed, not planning');
  assert.ok(lastLine(status).startsWith(line), lastLine(status));

  const resumed = await mmif(stack, 'resume', 'wrong-path-wf', '--wait');
  assertClean(resumed);
  assert.equal(resumed.code, 2);
  assert.equal(lastLine(resumed), lastLine(status));
});

test('a build started on Temporal under a workflow id other than its buildId is refused at once: status and resume --wait say how to start it, exit 2', async () => {
  // As `temporal workflow start --workflow-id other-id` would: the config says buildId 'own-id'.
  const output = path.join(dir, 'out-other-id');
  const requests = stack.simulator.stats().requests;
  const started = await stack.client.workflow.start('buildDataset', { taskQueue: stack.taskQueue, workflowId: 'other-id', args: [config('own-id', { output })] });
  await assert.rejects(started.result());
  const line =
    "mmif: build other-id failed: workflow id 'other-id' is not the config's buildId 'own-id': start the build with --workflow-id own-id (mmif status and resume find builds by their buildId)";
  const status = await mmif(stack, 'status', 'other-id');
  assertClean(status);
  assert.equal(status.code, 2, status.stderr);
  assert.equal(lastLine(status), line);
  const resumed = await mmif(stack, 'resume', 'other-id', '--wait');
  assertClean(resumed);
  assert.equal(resumed.code, 2, resumed.stderr);
  assert.equal(lastLine(resumed), line);
  // Refused before pre-flight and planning: no model called, nothing written, no build under its buildId.
  assert.equal(stack.simulator.stats().requests, requests, 'no model call');
  await assert.rejects(readdir(output), 'no output written');
  assert.equal((await mmif(stack, 'status', 'own-id')).code, 3);
});

test('a ChartQA sub-folder given as the root names both layouts it looked for, exit 2', async () => {
  const root = path.join(dir, 'chartqa', 'ChartQA Dataset', 'train');
  const file = await configFile('chartqa-subfolder', { sources: [{ type: 'chartqa', uri: root }] });
  const built = await mmif(stack, 'build', '--config', file, '--wait');
  assertClean(built);
  assert.equal(built.code, 2, built.stderr);
  assert.ok(
    lastLine(built).startsWith(
      `mmif: checks failed: sources[0] (chartqa): ${root}: no ChartQA dataset found: neither 'ChartQA Dataset/train/train_human.json' nor 'train/train_human.json' exists`,
    ),
    lastLine(built),
  );
});

test('an unwritable output is refused by the checks on the worker, pre-flight off too: build --wait exits 2 naming it and starts nothing; validate says the same', async () => {
  const blocker = path.join(dir, 'a-file');
  await writeFile(blocker, 'not a folder');
  const output = path.join(blocker, 'out');
  const file = await configFile('unwritable', { output, llm: { preflight: false } });
  const built = await mmif(stack, 'build', '--config', file, '--wait');
  assertClean(built);
  assert.equal(built.code, 2, built.stderr);
  // (The probe object's name is random: `.mmif-write-probe-<hex>`, written through a temp file `.tmp-<pid>-<hex>`.)
  const probeNamed = (line: string) => line.replace(/\.mmif-write-probe-[0-9a-f]+\.tmp-\d+-[0-9a-f]+/, '<probe>');
  assert.equal(probeNamed(lastLine(built)), `mmif: checks failed: output ${output} is not writable: ENOTDIR: a part of the path is a file, not a directory (${output}/<probe>)`);
  assert.equal((await mmif(stack, 'status', 'unwritable')).code, 3, 'no build was started');
  // `mmif validate` runs the same checks here, and says the same.
  const validated = await mmif(stack, 'validate', '--config', file);
  assert.equal(validated.code, 2, validated.stdout + validated.stderr);
  assert.equal(probeNamed(lastLine(validated)), probeNamed(`${file}: ${lastLine(built).slice('mmif: checks failed: '.length)}`));

  // A build started without the CLI's checks (the Temporal CLI, an SDK) fails planning on the same
  // probe, and `mmif status` names the output with the exit code of an input error.
  const started = await stack.client.workflow.start('buildDataset', {
    taskQueue: stack.taskQueue,
    workflowId: 'unwritable',
    args: [config('unwritable', { output, llm: { preflight: false } })],
  });
  await assert.rejects(started.result());
  const status = await mmif(stack, 'status', 'unwritable');
  assert.equal(status.code, 2, status.stderr);
  assert.match(status.stdout, /^unwritable failed$/m);
  assert.equal(
    probeNamed(lastLine(status)),
    `mmif: build unwritable failed: output ${output} is not writable: ENOTDIR: a part of the path is a file, not a directory (${output}/<probe>)`,
  );
});

test('`mmif validate` probes a writable output that does not exist yet and leaves nothing there', async () => {
  const fresh = path.join(dir, 'fresh');
  const file = await configFile('fresh-output', { output: path.join(fresh, 'deeper', 'out') });
  const validated = await mmif(stack, 'validate', '--config', file);
  assert.equal(validated.code, 0, validated.stdout + validated.stderr);
  assert.match(validated.stdout, /: ok \(build fresh-output: /);
  await assert.rejects(readdir(fresh), { code: 'ENOENT' }, 'the folders the probe made are gone');
});

test('an endpoint nothing listens on: `mmif build --wait` fails its pre-flight at once on one line naming endpoint, model, roles and what to check, exit 2, and starts no build', async () => {
  const port = await closedPort();
  // The default retry settings: a refused connection is not retried, whatever they allow.
  const file = await configFile('dead-endpoint', { models: { default: { model: 'mmif-sim-vlm', baseUrl: `http://127.0.0.1:${port}/v1` } } });
  const built = await mmif(stack, 'build', '--config', file, '--wait');
  assertClean(built);
  assert.equal(built.code, 2, built.stdout + built.stderr);
  assert.equal(lastLine(built), deadEndpointLine(port));
  assert.doesNotMatch(built.stdout + built.stderr, /starting anyway|shard/);
  await assert.rejects(stack.client.workflow.getHandle('dead-endpoint').describe(), /not found/i, 'no build was started');
  await assert.rejects(readdir(path.join(dir, 'out', 'dead-endpoint')), { code: 'ENOENT' }, 'nothing written for it');
});

const deadEndpointLine = (port: number) =>
  `mmif: pre-flight failed: instruction, constraints, compatibility, verifier, answer, rejected, judge: model endpoint http://127.0.0.1:${port}/v1 (model mmif-sim-vlm): ` +
  `nothing listens at 127.0.0.1:${port}: connection refused — check the baseUrl these roles are given under models`;

test('an endpoint nothing listens on, through the Batch API: `mmif build --wait` and `mmif status` end with the call, the role and the attempts on one line, exit 1', async () => {
  const port = await closedPort();
  const file = await configFile('dead-batch', {
    models: { default: { model: 'mmif-sim-vlm', baseUrl: `http://127.0.0.1:${port}/v1`, batch: true } },
    retry: { maximumAttempts: 1 },
    llm: { preflight: false },
  });
  const built = await mmif(stack, 'build', '--config', file, '--wait');
  assertClean(built);
  assert.equal(built.code, 1, built.stdout + built.stderr);
  const line =
    `mmif: build dead-batch failed: 1 of 1 shards failed (report: ${path.join(dir, 'out', 'dead-batch', 'build-report.json')}): ` +
    `shard 0: instruction: Batch API POST /files: model endpoint http://127.0.0.1:${port}/v1 (model mmif-sim-vlm): cannot connect: connect ECONNREFUSED 127.0.0.1:${port}, 1 attempt`;
  assert.equal(lastLine(built), line);
  const status = await mmif(stack, 'status', 'dead-batch');
  assert.equal(status.code, 1, status.stderr);
  assert.equal(lastLine(status), line);
});

test('a changed config under an existing buildId: `mmif build` refuses it; started on Temporal directly, status says why; exit 2', async () => {
  const file = await configFile('changed');
  const built = await mmif(stack, 'build', '--config', file, '--wait');
  assert.equal(built.code, 0, built.stderr);
  const refusal = (fingerprints: string) =>
    `build 'changed' already exists in ${path.join(dir, 'out')} with a different config (fingerprint ${fingerprints}); use a new buildId for a new version ('mmif build --new-version' picks one)`;
  const fingerprints = '[0-9a-f]{12}, now [0-9a-f]{12}';

  await writeFile(file, JSON.stringify(config('changed', { seed: 5 })));
  const refused = await mmif(stack, 'build', '--config', file);
  assertClean(refused);
  assert.equal(refused.code, 2, 'refused before starting, without --wait too');
  assert.match(lastLine(refused), new RegExp(`^mmif: checks failed: ${escape(refusal('@')).replace('@', fingerprints)}$`));

  const changed = await stack.client.workflow.start('buildDataset', { taskQueue: stack.taskQueue, workflowId: 'changed', args: [config('changed', { seed: 5 })] });
  await changed.result().catch(() => undefined);
  const status = await mmif(stack, 'status', 'changed');
  assertClean(status);
  assert.equal(status.code, 2);
  assert.match(status.stdout, /^changed failed$/m);
  assert.match(lastLine(status), new RegExp(`^mmif: build changed failed: ${escape(refusal('@')).replace('@', fingerprints)}$`));
});

test('a build planned under another wording of a prompt: `mmif build` and `mmif resume --wait` refuse it naming the prompt; exit 2', async () => {
  const file = await configFile('reworded');
  const built = await mmif(stack, 'build', '--config', file, '--wait');
  assert.equal(built.code, 0, built.stderr);
  // What a build planned when the answer prompt read otherwise leaves: that text's hash and fingerprint.
  const store = new LocalStore(path.join(dir, 'out'));
  const key = buildLayout('reworded').config;
  const stored = (await getJson<StoredConfig>(store, key))!;
  const prompts = { ...stored.prompts, answer: { ...stored.prompts.answer!, sha256: sha256Hex('an earlier wording') } };
  await putJson(store, key, storedConfigOf(stored.config, prompts));
  const refusal = new RegExp(
    `build 'reworded' already exists in ${escape(path.join(dir, 'out'))} with prompts changed since it was planned \\(answer\\) ` +
      `\\(fingerprint [0-9a-f]{12}, now [0-9a-f]{12}\\); use a new buildId for a new version \\('mmif build --new-version' picks one\\)$`,
  );

  const rebuilt = await mmif(stack, 'build', '--config', file);
  assertClean(rebuilt);
  assert.equal(rebuilt.code, 2, rebuilt.stderr);
  assert.match(lastLine(rebuilt), new RegExp(`^mmif: checks failed: ${refusal.source}`));

  const resumed = await mmif(stack, 'resume', 'reworded', '--wait');
  assertClean(resumed);
  assert.equal(resumed.code, 2, resumed.stdout + resumed.stderr);
  assert.match(lastLine(resumed), new RegExp(`^mmif: build reworded failed: ${refusal.source}`));
});

test('--wait follows its own run: another run started under the same buildId once it completed is not reported', async () => {
  const file = await configFile('own-run');
  const built = await mmif(stack, 'build', '--config', file, '--wait');
  assert.equal(built.code, 0, built.stderr);
  const ours = /started build own-run \(run ([0-9a-f-]+)\)/.exec(built.stdout)![1]!;
  // The other run fails (a changed config); a CLI following the build id rather than its run would report that.
  const other = await stack.client.workflow.start('buildDataset', { taskQueue: stack.taskQueue, workflowId: 'own-run', args: [config('own-run', { seed: 9 })] });
  await other.result().catch(() => undefined);
  const run = new BuildRun(stack.client, 'own-run', ours);
  const description = await run.describe();
  assert.equal(description.status.name, 'COMPLETED');
  assert.equal(description.runId, ours);
  assert.equal((await run.report(description)).buildId, 'own-run');
  // Following the build id instead finds the other run, which failed.
  const latest = new BuildRun(stack.client, 'own-run');
  assert.equal((await latest.describe()).runId, other.firstExecutionRunId);
});

test('pre-flight checks the endpoint the worker will call, not the one the shell running `mmif build` names', async () => {
  const file = await configFile('worker-endpoint');
  // The shell's OPENAI_BASE_URL is a dead port; the worker's (this process's) is the simulator.
  const env = { TEMPORAL_ADDRESS: stack.server.address, TEMPORAL_NAMESPACE: 'default', MMIF_TASK_QUEUE: stack.taskQueue, OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' };
  const built = await runMmif(['build', '--config', file], { env });
  assert.equal(built.code, 0, built.stdout + built.stderr);
  assert.match(built.stdout, new RegExp(`^pre-flight: ${escape(stack.simulator.url)} \\(model mmif-sim-vlm, with an image\\) ok`, 'm'));
  assert.doesNotMatch(built.stdout + built.stderr, /127\.0\.0\.1:1\b/);
  await stack.client.workflow.getHandle('worker-endpoint').result();
});

test('build --wait with no worker on its task queue says so after a short while: the queue and how to start a worker', { timeout: 90_000 }, async () => {
  const file = await configFile('no-worker');
  const queue = 'mmif-nobody-polls';
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'build', '--config', file, '--wait'], {
    env: { ...process.env, TEMPORAL_ADDRESS: stack.server.address, TEMPORAL_NAMESPACE: 'default', MMIF_TASK_QUEUE: queue },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  const expected = noWorkerLine(queue);
  try {
    await new Promise<void>((resolve, reject) => {
      child.stderr!.on('data', (d: Buffer) => {
        stderr += d.toString();
        if (stderr.split('\n').includes(expected)) resolve();
      });
      child.once('exit', (code) => reject(new Error(`build --wait exited (${code}) before saying no worker polls: ${stderr}`)));
    });
    assert.equal(
      expected,
      "no worker polls task queue mmif-nobody-polls: the build waits until one does; start one with `MMIF_TASK_QUEUE=mmif-nobody-polls mmif worker` (with the build's OPENAI_BASE_URL and keys)",
    );
    assert.equal(stderr.split('\n').filter((line) => line === expected).length, 1, 'said once');
    // `mmif status` on the open build says the same, at once.
    const status = await runMmif(['status', 'no-worker'], { env: { TEMPORAL_ADDRESS: stack.server.address, TEMPORAL_NAMESPACE: 'default' } });
    assert.equal(status.code, 0, status.stderr);
    assert.equal(status.stdout.trim(), 'no-worker running (no worker answered the progress query)');
    assert.equal(lastLine(status), expected);
  } finally {
    child.kill();
    await stack.client.workflow
      .getHandle('no-worker')
      .terminate('test over')
      .catch(() => undefined);
  }
});

test('temp files a killed writer left in the dataset are gone after the build finalizes', async () => {
  const file = await configFile('temp-files');
  assert.equal((await mmif(stack, 'build', '--config', file, '--wait')).code, 0);
  const root = path.join(dir, 'out', 'temp-files');
  // What a worker killed between its temp file and the rename leaves (issue 22: after ENOSPC and a resume).
  const strays = ['instruct/parquet/shard-00000.parquet.tmp-4242-0123456789ab', 'dataset_info.json.tmp-4242-ba9876543210'];
  for (const stray of strays) await writeFile(path.join(root, stray), 'cut short');
  // The same build again: its shards are committed, so it only finalizes.
  const again = await mmif(stack, 'build', '--config', file, '--wait');
  assert.equal(again.code, 0, again.stderr);
  const left = (await readdir(root, { recursive: true })).filter((name) => name.includes('.tmp-'));
  assert.deepEqual(left, []);
});

test('build --local with an unwritable output is refused by its checks, leaves nothing running, and status answers from its record', async () => {
  const cwd = path.join(dir, 'local-cwd');
  await mkdir(cwd, { recursive: true });
  const blocker = path.join(dir, 'a-file');
  await writeFile(blocker, 'not a folder');
  const output = path.join(blocker, 'local-out');
  const file = await configFile('local-unwritable', { output, llm: { preflight: false } });
  // Nothing listens on TEMPORAL_ADDRESS: `status` finds the server gone.
  const env = { TEMPORAL_ADDRESS: '127.0.0.1:1', OPENAI_BASE_URL: stack.simulator.url };
  const built = await runMmif(['build', '--config', file, '--local'], { env, cwd });
  assertClean(built);
  // The worker's own failure dumps stay off the screen: the cause is the CLI's one line.
  assert.doesNotMatch(built.stderr, /Workflow failed|Activity failed/);
  assert.equal(built.code, 2, built.stdout + built.stderr);
  assert.equal(
    lastLine(built).replace(/\.mmif-write-probe-[0-9a-f]+\.tmp-\d+-[0-9a-f]+/, '<probe>'),
    `mmif: checks failed: output ${output} is not writable: ENOTDIR: a part of the path is a file, not a directory (${output}/<probe>)`,
  );
  const server = /temporal dev server: (127\.0\.0\.1):(\d+)/.exec(built.stdout)!;
  assert.equal(await listening(server[1]!, Number(server[2])), false, 'the dev server stopped with the command');

  const status = await runMmif(['status', 'local-unwritable'], { env, cwd });
  assert.equal(status.code, 2, status.stderr);
  assert.match(status.stdout, /^local-unwritable refused \(a --local build, ended .*; its Temporal server is gone\)$/m);
  assert.equal(lastLine(status), lastLine(built));
});

test('build --local against an endpoint nothing listens on fails its pre-flight on one line, exit 2, with no shard started and no call retried', async () => {
  const cwd = path.join(dir, 'local-dead-endpoint');
  await mkdir(cwd, { recursive: true });
  const port = await closedPort();
  const file = await configFile('local-dead-endpoint', { models: { default: { model: 'mmif-sim-vlm', baseUrl: `http://127.0.0.1:${port}/v1` } } });
  const built = await runMmif(['build', '--config', file, '--local'], { env: { TEMPORAL_ADDRESS: '127.0.0.1:1' }, cwd });
  assertClean(built);
  assert.doesNotMatch(built.stderr, /Workflow failed|Activity failed/);
  assert.equal(built.code, 2, built.stdout + built.stderr);
  assert.equal(lastLine(built), deadEndpointLine(port));
  // Nothing after the checks: no build, no shard, no retried call.
  assert.doesNotMatch(built.stdout + built.stderr, /starting anyway|shard|attempt|started build/);
  // Nothing written for it but the record of how the --local run ended, beside where the dataset would be (cli/localRecord.ts).
  const written = await readdir(path.join(dir, 'out', 'local-dead-endpoint'), { recursive: true }).catch(() => []);
  assert.deepEqual(written.sort(), ['_work', path.join('_work', 'local-run.json')], 'nothing written for it but the run record');
});

test('a failed --local build: status from a folder below where it ran shows its plan and cause; from elsewhere, says where to run it', async () => {
  const cwd = path.join(dir, 'local-dead');
  await mkdir(path.join(cwd, 'sub', 'deeper'), { recursive: true });
  const port = await closedPort();
  const file = await configFile('local-dead', {
    models: { default: { model: 'mmif-sim-vlm', baseUrl: `http://127.0.0.1:${port}/v1` } },
    retry: { maximumAttempts: 1 },
    llm: { preflight: false, retry: { maxAttempts: 1, baseDelayMs: 0 } },
  });
  const env = { TEMPORAL_ADDRESS: '127.0.0.1:1', OPENAI_BASE_URL: stack.simulator.url };
  const built = await runMmif(['build', '--config', file, '--local'], { env, cwd });
  assertClean(built);
  assert.equal(built.code, 1, built.stdout + built.stderr);
  assert.match(lastLine(built), /^mmif: build local-dead failed: 1 of 1 shards failed .*: shard 0: instruction: model endpoint .*: cannot connect: connect ECONNREFUSED /);

  const status = await runMmif(['status', 'local-dead'], { env, cwd: path.join(cwd, 'sub', 'deeper') });
  assert.equal(status.code, 1, status.stderr);
  assert.equal(lastLine(status), lastLine(built));
  // The plan's samples, though no shard committed; no files listed for the failed shard.
  assert.match(status.stdout, /^samples: 2 planned -> 0 MM-IFInstruct, 0 MM-IFDPO pairs, 0 rejected samples, 0 rejected pairs$/m);
  assert.match(status.stdout, /^accounting cc3m #0: read 2 = planned 2 \+ .*; planned 2 = accepted 0 \+ rejected 0 \+ uncommitted 2$/m);
  assert.doesNotMatch(status.stdout, /^ {2}shard 0: /m);

  const elsewhere = await runMmif(['status', 'local-dead'], { env, cwd: dir });
  assert.equal(elsewhere.code, 1);
  assert.equal(
    elsewhere.stderr.trim(),
    'mmif: cannot reach Temporal at 127.0.0.1:1: Connection refused; a `mmif build --local` build is known from the folder it ran in (run `mmif status local-dead` there or in a folder below it) or from its dataset root, in any folder: `mmif status <output>/local-dead`',
  );
});

test('`mmif worker` with no Temporal server names the address and the cause on one line, exit 1', async () => {
  const result = await runMmif(['worker'], { env: { TEMPORAL_ADDRESS: '127.0.0.1:1' } });
  assertClean(result);
  assert.equal(result.code, 1, result.stdout + result.stderr);
  assert.equal(result.stderr.trim(), 'mmif: cannot reach Temporal at 127.0.0.1:1: Connection refused');
});

function listening(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, host, () => {
      socket.end();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
