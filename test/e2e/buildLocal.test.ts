/**
 * `mmif build --config FILE --local`: one command runs any config with no server or worker started
 * by hand: the CLI starts a Temporal dev server, a worker and the simulator (no OPENAI_BASE_URL) in
 * its own process, waits, prints the summary, and ends with the cause on one line when it cannot build.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { temporalCliPath } from '../../local/tools.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { getJson } from '../../storage/objectStore.js';
import { LocalStore } from '../../storage/localStore.js';
import { writeCc3m } from '../fixtures/cc3m.js';
import { startSimulator } from '../../simulator/server.js';

const CLI = fileURLToPath(new URL('../../cli/mmif.ts', import.meta.url));
/** tsx by its own location: the CLI runs in another folder, where `--import tsx` would not resolve. */
const TSX_LOADER = import.meta.resolve('tsx');
let dir: string;

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-local-'));
  await writeCc3m(new LocalStore(path.join(dir, 'cc3m')), 'files', { perShard: 3, shards: 1 });
});

after(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The CLI's environment as a user has it: no Temporal address, no endpoint. */
function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  for (const name of ['OPENAI_BASE_URL', 'TEMPORAL_ADDRESS', 'MMIF_TASK_QUEUE']) delete env[name];
  return env;
}

/** The CLI as a user runs it: no Temporal address, no endpoint in the environment. */
function mmifLocal(args: string[], extraEnv: Record<string, string> = {}, cwd = dir): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = userEnv(extraEnv);
  return new Promise((resolve) => {
    // In the test's folder: a --local build records how it ended under `.mmif/` where it runs.
    execFile(process.execPath, ['--import', TSX_LOADER, CLI, ...args], { env, cwd, maxBuffer: 32 << 20 }, (err, stdout, stderr) =>
      resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const config = (buildId: string, source: string) => ({
  buildId,
  seed: 5,
  output: path.join(dir, 'out'),
  sources: [{ type: 'cc3m', uri: source }],
  maxSamples: 3,
  shardSize: 3,
  models: { default: { model: 'mmif-sim-vlm' } },
});

test('`mmif build --config FILE --local` runs the build on its own dev server, worker and simulator and prints the summary', async () => {
  const file = path.join(dir, 'local.json');
  await writeFile(file, JSON.stringify(config('local-build', path.join(dir, 'cc3m'))));
  const result = await mmifLocal(['build', '--config', file, '--local']);
  assert.equal(result.code, 0, result.stdout + result.stderr);
  assert.match(result.stdout, /simulator: http:\/\/127\.0\.0\.1:\d+\/v1 \(answers will be SIMULATED\)/);
  assert.match(result.stdout, /build local-build: COMPLETED/);
  const report = await getJson<BuildReport>(new LocalStore(path.join(dir, 'out')), buildLayout('local-build').report);
  assert.equal(report?.shards.committed, 1);
  assert.equal(report!.datasetRoot, '.', 'build-report.json travels with the dataset: it names no folder of the machine that wrote it');
  assert.ok(result.stdout.includes(`dataset root: ${path.join(dir, 'out', 'local-build')}`), 'the summary names where the dataset is');
  const a = report!.accounting[0]!;
  assert.ok(
    result.stdout.includes(`accounting cc3m #0: read ${a.read} = planned ${a.planned} + not selected `) &&
      result.stdout.includes(`; planned ${a.planned} = accepted ${a.accepted} + rejected `),
    `the summary shows the source's accounting: ${result.stdout}`,
  );
  assert.ok(!result.stdout.includes('DOES NOT BALANCE'));
  // Once: the summary has it, and the progress screen's closing lines leave it to the summary.
  assert.equal(result.stdout.split('\n').filter((line) => line.startsWith('accounting cc3m #0: ')).length, 1, result.stdout);
  // Each export command pasteable into a shell as printed: no `trl|mmifeval` pipe.
  const output = path.join(dir, 'out');
  assert.ok(result.stdout.includes(`\nTRL: npm run mmif -- export --output ${output} --build-id local-build --format trl\n`), result.stdout);
  // This build reserved no eval split: a plain `--format mmifeval` would be refused (exit 2), `--all` is not.
  assert.ok(result.stdout.includes(`\nMM-IFEval: npm run mmif -- export --output ${output} --build-id local-build --format mmifeval --all  # every sample`), result.stdout);
});

test('`mmif build --local` with every model role on its own baseUrl starts no simulator and says where the calls go', async () => {
  const endpoint = await startSimulator({ seed: 5 });
  try {
    const file = path.join(dir, 'own-endpoint.json');
    const own = config('local-own-endpoint', path.join(dir, 'cc3m'));
    await writeFile(file, JSON.stringify({ ...own, models: { default: { model: 'mmif-sim-vlm', baseUrl: endpoint.url } } }));
    const result = await mmifLocal(['build', '--config', file, '--local']);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.ok(result.stdout.split('\n').includes("model endpoints: each model role's own baseUrl from the config (no simulator)"), result.stdout);
    assert.doesNotMatch(result.stdout, /^simulator: /m);
    assert.ok(endpoint.stats().requests > 0, 'the calls went to the endpoint the config names');
  } finally {
    await endpoint.close();
  }
});

test("`mmif status quickstart-sim` after `npm start` (mmif quickstart) answers from the run's record, as after `build --local`", async () => {
  const started = await mmifLocal(['quickstart', '--out', path.join(dir, 'qs'), '--samples', '2']);
  assert.equal(started.code, 0, started.stdout + started.stderr);
  const status = await mmifLocal(['status', 'quickstart-sim']);
  assert.equal(status.code, 0, status.stdout + status.stderr);
  assert.match(status.stdout, /^quickstart-sim done \(a --local build, ended .*; its Temporal server is gone\)$/m);
  assert.ok(status.stdout.includes(`dataset root: ${path.join(dir, 'qs', 'quickstart-sim')}`), status.stdout);
  // From another folder: the buildId alone is not known there (the hint names the dataset root form), the dataset root is.
  const elsewhere = await mkdtemp(path.join(tmpdir(), 'mmif-elsewhere-'));
  try {
    const byId = await mmifLocal(['status', 'quickstart-sim'], {}, elsewhere);
    assert.equal(byId.code, 1, byId.stdout + byId.stderr);
    assert.match(byId.stderr, /from its dataset root, in any folder: `mmif status <output>\/quickstart-sim`/);
    const byRoot = await mmifLocal(['status', path.join(dir, 'qs', 'quickstart-sim')], {}, elsewhere);
    assert.equal(byRoot.code, 0, byRoot.stdout + byRoot.stderr);
    assert.match(byRoot.stdout, /^quickstart-sim done \(a --local build, ended .*; its Temporal server is gone\)$/m);
    assert.ok(byRoot.stdout.includes(`dataset root: ${path.join(dir, 'qs', 'quickstart-sim')}`), byRoot.stdout);
  } finally {
    await rm(elsewhere, { recursive: true, force: true });
  }
});

test('`mmif quickstart` whose shards all fail on a key refused mid-build exits 2, as build --wait and status do', async () => {
  const endpoint = await startSimulator({ seed: 5 });
  // Slow enough that the key is refused while the shards run, before either commits.
  endpoint.setFaults({ latencyMs: 300 });
  try {
    const args = ['--import', TSX_LOADER, CLI, 'quickstart', '--out', path.join(dir, 'qs-key'), '--build-id', 'qs-key'];
    const child = spawn(process.execPath, args, { env: { ...userEnv(), OPENAI_BASE_URL: endpoint.url, MMIF_MODEL: 'mmif-sim-vlm' }, cwd: dir });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      // The pre-flight passed and the shards run: from now on the endpoint refuses the key.
      if (/^ {2}running: shards /m.test(stdout)) endpoint.setFaults({ requiredApiKey: 'sk-the-right-key-0123456789' });
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.equal(code, 2, stdout + stderr);
    assert.match(
      stderr.trim().split('\n').at(-1)!,
      /^mmif: build qs-key failed: 2 of 2 shards failed \(report: .*\): shard \d: \w+: model endpoint .* HTTP 401: .*; shard \d: \w+: model endpoint .* HTTP 401: /,
      stderr,
    );
  } finally {
    await endpoint.close();
  }
});

test("a second `mmif build --local` over the same output answers every model call from the first one's cache (the simulator keeps its port)", async () => {
  const file = path.join(dir, 'again.json');
  await writeFile(file, JSON.stringify(config('local-again', path.join(dir, 'cc3m'))));
  const result = await mmifLocal(['build', '--config', file, '--local']);
  assert.equal(result.code, 0, result.stdout + result.stderr);
  const report = await getJson<BuildReport>(new LocalStore(path.join(dir, 'out')), buildLayout('local-again').report);
  const stages = Object.entries(report!.usage);
  assert.ok(stages.length > 0);
  for (const [stage, usage] of stages) assert.equal(usage.cachedRequests, usage.requests, `${stage}: ${JSON.stringify(usage)}`);
});

test('`mmif build --local` refuses a wrong data path with its cause on one line, exit 2', async () => {
  const file = path.join(dir, 'failing.json');
  const missing = path.join(dir, 'no-such-source');
  await writeFile(file, JSON.stringify(config('local-failing', missing)));
  const result = await mmifLocal(['build', '--config', file, '--local']);
  assert.equal(result.code, 2, result.stdout + result.stderr);
  assert.ok(
    result.stderr
      .trimEnd()
      .endsWith(
        `mmif: checks failed: sources[0] (cc3m): ${missing}: no CC3M dataset found (the root is missing or empty); expected an img2dataset CC3M layout: webdataset (*.tar shards at the root, e.g. 00000.tar), files (numbered folders: 00000/000000000.jpg|.txt|.json) or flat (.jpg/.jpeg/.png/.webp/.gif/.tiff/.avif/.bmp images at the root)`,
      ),
    result.stderr,
  );
});

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.end();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

test('a dev server that fails to start is tried once more, and the build runs', async () => {
  // A `temporal` that fails its first start (as under load: "Frontend is not healthy yet"), then is the real one.
  const marker = path.join(dir, 'failed-once');
  const flaky = path.join(dir, 'flaky-temporal.sh');
  await writeFile(flaky, `#!/bin/sh\nif [ ! -e '${marker}' ]; then touch '${marker}'; echo 'Frontend is not healthy yet' >&2; exit 1; fi\nexec '${temporalCliPath()}' "$@"\n`);
  await chmod(flaky, 0o755);
  const file = path.join(dir, 'flaky.json');
  await writeFile(file, JSON.stringify(config('local-flaky', path.join(dir, 'cc3m'))));
  const result = await mmifLocal(['build', '--config', file, '--local'], { TEMPORAL_CLI_PATH: flaky });
  assert.equal(result.code, 0, result.stdout + result.stderr);
  assert.match(result.stdout, /the local Temporal dev server did not start \(temporal dev server exited \(code 1\): Frontend is not healthy yet\); trying once more/);
  assert.match(result.stdout, /build local-flaky: COMPLETED/);
});

test('Ctrl-C during `mmif build --local` stops its dev server and simulator before it exits', async () => {
  const file = path.join(dir, 'interrupted.json');
  await writeFile(file, JSON.stringify({ ...config('local-interrupted', path.join(dir, 'cc3m')), maxSamples: 3 }));
  const child = spawn(process.execPath, ['--import', TSX_LOADER, CLI, 'build', '--config', file, '--local'], { env: userEnv(), cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  // Interrupted once the build runs: its server and simulator are up.
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', () => /started build local-interrupted/.test(out) && resolve());
    child.once('exit', (code) => reject(new Error(`exited (${code}) before the build started: ${out}`)));
  });
  const server = Number(/temporal dev server: 127\.0\.0\.1:(\d+)/.exec(out)![1]);
  const simulator = Number(/simulator: http:\/\/127\.0\.0\.1:(\d+)/.exec(out)![1]);
  assert.ok((await listening(server)) && (await listening(simulator)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGINT');
  assert.equal(await exited, 130);
  assert.match(err, /^SIGINT: stopping the local worker, Temporal dev server and simulator$/m);
  assert.equal(await listening(server), false, 'the dev server stopped');
  assert.equal(await listening(simulator), false, 'the simulator stopped');
});
