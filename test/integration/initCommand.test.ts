/**
 * `mmif init` writes a starter config that `mmif build` accepts, naming the JSON Schema beside the
 * examples; `mmif schema` prints that schema. Run as users run them (the real CLI).
 */
import { SOURCE_TYPES } from '../../sources/registry.js';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readConfig } from '../../cli/configFile.js';
import { schemaText } from '../../cli/writeConfigReference.js';
import { LocalStore } from '../../storage/localStore.js';
import { writeFolderLayout } from '../fixtures/folderSources.js';
import { runMmif } from '../harness/mmifCli.js';
import { fileURLToPath } from 'node:url';

const HUB = fileURLToPath(new URL('../fixtures/hub/data/', import.meta.url));
import { PassThrough } from 'node:stream';
import { ask } from '../../cli/commands/init.js';
import { parseBuildConfig } from '../../config/buildConfig.js';
import { MAX_PILOT, MAX_VERSION, USER_BUILD_ID_MAX, pilotBuildId, versionedBuildId } from '../../config/buildIds.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-init-'));
});
after(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('mmif init from flags writes a config mmif build reads, with $schema pointing at the schema', async () => {
  const file = path.join(dir, 'configs', '..', 'build.json');
  const result = await runMmif(['init', '--source', 'chartqa=/data/ChartQA', '--source', 'ALLaVA=data/allava', '--model', 'gpt-4o-mini', '--samples', '200', '--out', file]);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /^wrote .*build\.json$/m);
  // The sources are not there: what validate says is printed, with the next commands as typed from the checkout.
  assert.match(result.stdout, /^validate found 2 problems:$/m);
  assert.match(result.stdout, /^ {2}.*build\.json: sources\[0\] \(chartqa\): /m);
  assert.match(result.stdout, /^next: fix them \(the config or the data\), then `npx mmif validate --config .*build\.json` and `npx mmif build --config .*build\.json --local`$/m);
  const raw = JSON.parse(await readFile(file, 'utf8')) as { $schema: string };
  assert.ok(existsSync(path.resolve(path.dirname(file), raw.$schema)), raw.$schema);
  const config = await readConfig(file);
  assert.deepEqual(
    config.sources.map((s) => [s.type, s.uri]),
    [
      ['chartqa', '/data/ChartQA'],
      ['allava', path.join(dir, 'data/allava')],
    ],
  );
  assert.equal(config.maxSamples, 200);
  assert.equal(config.models.default.model, 'gpt-4o-mini');

  const again = await runMmif(['init', '--source', 'rico=/data/rico', '--out', file]);
  assert.equal(again.code, 2);
  assert.match(again.stderr, /build\.json exists: pass --force to overwrite it/);
});

test('mmif init --out into a folder that does not exist makes the folder and says so (no raw ENOENT)', async () => {
  const file = path.join(dir, 'new', 'deeper', 'build.json');
  const result = await runMmif(['init', '--source', 'chartqa=/data/ChartQA', '--out', file]);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /^wrote .*build\.json \(made its folder .*deeper\)$/m);
  assert.equal((await readConfig(file)).sources[0]!.uri, '/data/ChartQA');
});

test('mmif init without --source off a terminal, or with an unknown type, exits 2 saying why', async () => {
  const none = await runMmif(['init', '--out', path.join(dir, 'none.json')]);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /give at least one --source TYPE=URI/);
  const unknown = await runMmif(['init', '--source', 'coco=/data/coco', '--out', path.join(dir, 'unknown.json')]);
  assert.equal(unknown.code, 2);
  assert.ok(unknown.stderr.includes(`sources.0.type: "coco" is not one of ${SOURCE_TYPES.join(', ')}`), unknown.stderr);
});

test('mmif schema prints the build config JSON Schema, the same as examples/build-config.schema.json', async () => {
  const result = await runMmif(['schema']);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stdout, schemaText());
  const schema = JSON.parse(result.stdout) as { properties: Record<string, unknown>; required: string[] };
  assert.ok(schema.properties.$schema && schema.properties.buildId);
  assert.deepEqual(schema.required.sort(), ['buildId', 'maxSamples', 'models', 'output', 'sources']);
});

test('mmif init and mmif validate print the layout and mapping each source chose, or why its root cannot be read', async () => {
  await writeFolderLayout(new LocalStore(path.join(dir, 'folder')), 'imagefolder-splits');
  await writeFolderLayout(new LocalStore(path.join(dir, 'llava')), 'llava-folder');
  const file = path.join(dir, 'layouts.json');
  const init = await runMmif(['init', '--source', 'imagefolder=folder', '--source', 'llava=llava', '--source', 'rico=missing', '--out', file]);
  assert.equal(init.code, 0, init.stderr);
  assert.match(init.stdout, /^ {2}sources\[0\] \(imagefolder .*folder\): layout metadata \(detected\): test\/metadata\.jsonl, train\/metadata\.jsonl; columns detected per file/m);
  assert.match(init.stdout, /^ {2}sources\[1\] \(llava .*llava\): files data\.json, more\.jsonl \(LLaVA conversations\), images under '\.'$/m);
  assert.match(init.stdout, /^ {2}.*layouts\.json: sources\[2\] \(rico\): .*no RICO screenshots found/m);
  // validate names the same choices once every source reads.
  const config = JSON.parse(await readFile(file, 'utf8')) as { sources: unknown[] };
  const valid = path.join(dir, 'valid.json');
  await writeFile(valid, JSON.stringify({ ...config, output: path.join(dir, 'out'), sources: config.sources.slice(0, 2) }));
  const validated = await runMmif(['validate', '--config', valid]);
  assert.equal(validated.code, 0, validated.stderr);
  assert.match(validated.stdout, /^ {2}sources\[0\] \(imagefolder .*\): layout metadata \(detected\)/m);
  assert.match(validated.stdout, /^ {2}sources\[1\] \(llava .*\): files data\.json, more\.jsonl/m);
});

test('mmif init and validate print the Parquet column mapping, whether detected (from the huggingface Image feature) or named by columns, and the Hub revision', async () => {
  const snapshot = path.join(HUB, 'hf-cache/datasets--HuggingFaceM4--ChartQA/snapshots/b605b6e08b57faf4359aeb2fe6a3ca595f99b6c5');
  const file = path.join(dir, 'parquet.json');
  const init = await runMmif(['init', '--source', `parquet=${snapshot}`, '--out', file]);
  assert.equal(init.code, 0, init.stderr);
  const detected =
    /^ {2}sources\[0\] \(parquet .*\): Parquet: 2 file\(s\) \(test, train\); columns image ← image \(bytes; huggingface Image feature\), question ← query, answer ← label; Hub snapshot HuggingFaceM4\/ChartQA@b605b6e08b57faf4359aeb2fe6a3ca595f99b6c5$/m;
  assert.match(init.stdout, detected);
  const config = JSON.parse(await readFile(file, 'utf8')) as { sources: Array<Record<string, unknown>> };
  const named = path.join(dir, 'parquet-named.json');
  await writeFile(named, JSON.stringify({ ...config, output: path.join(dir, 'out'), sources: [{ ...config.sources[0], columns: { image: 'image', answer: 'label' } }] }));
  const validated = await runMmif(['validate', '--config', named]);
  assert.equal(validated.code, 0, validated.stderr);
  assert.match(validated.stdout, /^ {2}sources\[0\] \(parquet .*\): .*columns image ← image \(bytes; columns\.image\), question ← query, answer ← label \(columns\.answer\);/m);
});

test('mmif init validates what it wrote: a config whose sources read says ok and the build command to run next', async () => {
  await writeFolderLayout(new LocalStore(path.join(dir, 'ready-folder')), 'imagefolder-splits');
  const file = path.join(dir, 'ready.json');
  const init = await runMmif(['init', '--source', 'imagefolder=ready-folder', '--output', 'ready-out', '--out', file]);
  assert.equal(init.code, 0, init.stderr);
  assert.match(init.stdout, /^.*ready\.json: ok \(build my-build: imagefolder .*ready-folder -> .*ready-out\)$/m);
  assert.match(init.stdout, /^next: `npx mmif build --config .*ready\.json --local`$/m);
  assert.doesNotMatch(init.stdout, /problem/);
});

test('mmif init asking on a terminal: an unknown source type is answered with the types that exist, then asked again', async () => {
  const input = new PassThrough();
  const output = new PassThrough();
  // One answer per question, given when it is asked: two wrong types, then a right one, its uri, no other source, the defaults.
  const replies = ['coco', '', 'ChartQA', '/data/ChartQA', 'n', '', '', '', ''];
  let shown = '';
  output.on('data', (chunk: Buffer) => {
    shown += chunk.toString();
    if (shown.endsWith(': ')) input.write(`${replies.shift()}\n`);
  });
  const answers = await ask({ buildId: 'my-build', output: 'out', model: 'gpt-4o', samples: '1000' }, input, output);
  assert.deepEqual(answers.sources, [{ type: 'chartqa', uri: '/data/ChartQA' }]);
  assert.ok(shown.includes(`'coco' is not a source type: one of ${SOURCE_TYPES.join(', ')}`), shown);
  assert.ok(shown.includes(`a source type is needed: one of ${SOURCE_TYPES.join(', ')}`), shown);
});

test('a buildId longer than the ids derived from it allow is refused by init and validate, naming the limit; the longest allowed one derives ids the schema takes', async () => {
  const longest = 'b'.repeat(USER_BUILD_ID_MAX);
  for (const derived of [pilotBuildId(longest, MAX_PILOT), versionedBuildId(longest, MAX_VERSION)]) {
    assert.equal(
      parseBuildConfig({ buildId: derived, output: 'out', sources: [{ type: 'chartqa', uri: '/d' }], maxSamples: 1, models: { default: { model: 'm' } } }).buildId,
      derived,
    );
  }
  const tooLong = `${longest}x`;
  const init = await runMmif(['init', '--source', 'chartqa=/data/ChartQA', '--build-id', tooLong, '--out', path.join(dir, 'long.json')]);
  assert.equal(init.code, 2);
  assert.match(
    init.stderr,
    new RegExp(
      `^mmif: buildId: ${tooLong.length} characters, at most ${USER_BUILD_ID_MAX}: the ids derived from it \\(<buildId>-pilot-${MAX_PILOT}, <buildId>-v${MAX_VERSION}\\) must stay within 100$`,
      'm',
    ),
  );
  assert.equal(existsSync(path.join(dir, 'long.json')), false);
  const file = path.join(dir, 'long-config.json');
  await writeFile(
    file,
    JSON.stringify({ buildId: tooLong, output: 'out', sources: [{ type: 'chartqa', uri: '/data/ChartQA' }], maxSamples: 5, models: { default: { model: 'gpt-4o' } } }),
  );
  const validated = await runMmif(['validate', '--config', file]);
  assert.equal(validated.code, 2);
  assert.match(validated.stderr, new RegExp(`long-config\\.json: invalid build config: buildId: ${tooLong.length} characters, at most ${USER_BUILD_ID_MAX}`));
});
