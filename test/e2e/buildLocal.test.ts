/**
 * `mmif build --config FILE --local`: one command runs any config with no server or worker started
 * by hand: the CLI starts a Temporal dev server, a worker and the simulator (no OPENAI_BASE_URL) in
 * its own process, waits, prints the summary, and ends with the cause on one line when it cannot build.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BuildReport } from '../../output/buildReport.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { getJson } from '../../storage/objectStore.js';
import { LocalStore } from '../../storage/localStore.js';
import { writeCc3m } from '../fixtures/cc3m.js';

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

/** The CLI as a user runs it: no Temporal address, no endpoint in the environment. */
function mmifLocal(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { ...process.env };
  for (const name of ['OPENAI_BASE_URL', 'TEMPORAL_ADDRESS', 'MMIF_TASK_QUEUE']) delete env[name];
  return new Promise((resolve) => {
    // In the test's folder: a --local build records how it ended under `.mmif/` where it runs.
    execFile(process.execPath, ['--import', TSX_LOADER, CLI, ...args], { env, cwd: dir, maxBuffer: 32 << 20 }, (err, stdout, stderr) =>
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
  const result = await mmifLocal('build', '--config', file, '--local');
  assert.equal(result.code, 0, result.stdout + result.stderr);
  assert.match(result.stdout, /simulator: http:\/\/127\.0\.0\.1:\d+\/v1 \(answers will be SIMULATED\)/);
  assert.match(result.stdout, /build local-build: COMPLETED/);
  const report = await getJson<BuildReport>(new LocalStore(path.join(dir, 'out')), buildLayout('local-build').report);
  assert.equal(report?.shards.committed, 1);
  assert.ok(result.stdout.includes(report!.datasetRoot), 'the summary names the dataset');
  const a = report!.accounting[0]!;
  assert.ok(
    result.stdout.includes(`accounting cc3m #0: read ${a.read} = planned ${a.planned} + not selected `) && result.stdout.includes(`; planned ${a.planned} = accepted ${a.accepted} + rejected `),
    `the summary shows the source's accounting: ${result.stdout}`,
  );
  assert.ok(!result.stdout.includes('DOES NOT BALANCE'));
});

test('a second `mmif build --local` over the same output answers every model call from the first one\'s cache (the simulator keeps its port)', async () => {
  const file = path.join(dir, 'again.json');
  await writeFile(file, JSON.stringify(config('local-again', path.join(dir, 'cc3m'))));
  const result = await mmifLocal('build', '--config', file, '--local');
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
  const result = await mmifLocal('build', '--config', file, '--local');
  assert.equal(result.code, 2, result.stdout + result.stderr);
  assert.ok(
    result.stderr.trimEnd().endsWith(`mmif: checks failed: sources[0] (cc3m): ${missing}: no CC3M dataset found (the root is missing or empty); expected an img2dataset CC3M layout: webdataset (*.tar shards at the root, e.g. 00000.tar), files (numbered folders: 00000/000000000.jpg|.txt|.json) or flat (.jpg/.jpeg/.png/.webp/.gif/.tiff/.avif/.bmp images at the root)`),
    result.stderr,
  );
});
