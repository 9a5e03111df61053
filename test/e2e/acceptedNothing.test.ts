/**
 * A build that plans samples and accepts none because every one failed on its input (here: a
 * LLaVA-style file whose images are all missing, as Geo170K's Hub layout was before its zip was
 * read), or that plans none because its filter refused every record at planning (a richness rule no
 * image passes), completes, but the user is told in one line and the command exits 1: `build --wait`,
 * `status` and `build --local` (and `status` of that --local build after its server is gone).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SAMPLES_DIR } from '../../cli/quickstartConfig.js';
import { LocalStore } from '../../storage/localStore.js';
import { sceneJpeg } from '../fixtures/images.js';
import { mmif, runMmif, type MmifResult } from '../harness/mmifCli.js';
import { startStack, type Stack } from '../harness/stack.js';

let stack: Stack;
let dir: string;

before(async () => {
  stack = await startStack({ simulator: { seed: 3 }, taskQueue: 'mmif-accepted-nothing' });
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-nothing-'));
  const turn = (from: string, value: string) => ({ from, value });
  const records = [0, 1, 2].map((i) => ({
    id: `r${i}`,
    image: `images/${i}.png`,
    conversations: [turn('human', `<image>\nWhat does diagram ${i} show?`), turn('gpt', 'A triangle.')],
  }));
  await new LocalStore(path.join(dir, 'missing')).put('qa.json', JSON.stringify(records));
  const present = new LocalStore(path.join(dir, 'present'));
  await present.put('qa.json', JSON.stringify(records));
  for (const i of [0, 1, 2]) await present.put(`images/${i}.png`, await sceneJpeg(50 + i, 320, 240));
});

after(async () => {
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The quickstart's ten images under a richness rule none passes (edge density is at most 1). */
const RICH_ONLY = { type: 'cc3m', uri: SAMPLES_DIR, layout: 'files', richness: { scorer: 'statistic', minScore: 2 } };

async function configFile(buildId: string, root: string | typeof RICH_ONLY): Promise<string> {
  const file = path.join(dir, `${buildId}.json`);
  const config = {
    buildId,
    output: path.join(dir, 'out'),
    sources: [typeof root === 'string' ? { type: 'llava', uri: path.join(dir, root) } : root],
    maxSamples: 3,
    shardSize: 3,
    models: { default: { model: 'mmif-sim-vlm' } },
  };
  await writeFile(file, JSON.stringify(config));
  return file;
}

const lastLine = (result: MmifResult): string => result.stderr.trim().split('\n').at(-1)!;
const nothingLine = (buildId: string) =>
  new RegExp(
    `^mmif: build ${buildId} accepted nothing: every one of its 3 planned samples failed on its input \\(missing-image 3\\); the reasons per sample are in rejects/ under `,
  );

test('build --wait and status exit 1 with one line when every planned sample failed on its input', async () => {
  const built = await mmif(stack, 'build', '--config', await configFile('all-missing', 'missing'), '--wait');
  assert.equal(built.code, 1, built.stdout + built.stderr);
  assert.match(lastLine(built), nothingLine('all-missing'));
  assert.match(built.stdout, /build all-missing: COMPLETED/, 'the run itself completed');
  const status = await mmif(stack, 'status', 'all-missing');
  assert.equal(status.code, 1, status.stdout + status.stderr);
  assert.match(lastLine(status), nothingLine('all-missing'));
  // The same data with its images accepts samples and exits 0: the line is about the input, not the type.
  const fine = await mmif(stack, 'build', '--config', await configFile('images-present', 'present'), '--wait');
  assert.equal(fine.code, 0, fine.stdout + fine.stderr);
});

test('build --local exits 1 with the same line after its summary, and status says it again once its server is gone', async () => {
  const env = { OPENAI_BASE_URL: undefined, TEMPORAL_ADDRESS: undefined, MMIF_TASK_QUEUE: undefined };
  const local = await runMmif(['build', '--config', await configFile('all-missing-local', 'missing'), '--local'], { env, cwd: dir });
  assert.equal(local.code, 1, local.stdout + local.stderr);
  assert.match(local.stdout, /accounting llava #0: read 3 = planned 3 /, 'the summary comes first');
  assert.match(lastLine(local), nothingLine('all-missing-local'));
  const status = await runMmif(['status', 'all-missing-local'], { env, cwd: dir });
  assert.equal(status.code, 1, status.stdout + status.stderr);
  assert.match(lastLine(status), nothingLine('all-missing-local'));
});

const refusedLine = (buildId: string) =>
  new RegExp(
    `^mmif: build ${buildId} accepted nothing: planning refused every one of the 10 records its sources gave \\(richness:below-min-score 10\\); the candidates and their reasons are in richness/ and rejects/ under `,
  );

test('build --wait and status exit 1 with one line when planning refused every record (a richness rule no image passes)', async () => {
  const built = await mmif(stack, 'build', '--config', await configFile('all-refused', RICH_ONLY), '--wait');
  assert.equal(built.code, 1, built.stdout + built.stderr);
  assert.match(lastLine(built), refusedLine('all-refused'));
  assert.match(built.stdout, /build all-refused: COMPLETED/, 'the run itself completed');
  const status = await mmif(stack, 'status', 'all-refused');
  assert.equal(status.code, 1, status.stdout + status.stderr);
  assert.match(lastLine(status), refusedLine('all-refused'));
});

test('build --local exits 1 with that line when planning refused every record, and status says it again', async () => {
  const env = { OPENAI_BASE_URL: undefined, TEMPORAL_ADDRESS: undefined, MMIF_TASK_QUEUE: undefined };
  const local = await runMmif(['build', '--config', await configFile('all-refused-local', RICH_ONLY), '--local'], { env, cwd: dir });
  assert.equal(local.code, 1, local.stdout + local.stderr);
  assert.match(lastLine(local), refusedLine('all-refused-local'));
  const status = await runMmif(['status', 'all-refused-local'], { env, cwd: dir });
  assert.equal(status.code, 1, status.stdout + status.stderr);
  assert.match(lastLine(status), refusedLine('all-refused-local'));
});
