/**
 * The six datasets as the Hugging Face Hub ships them, generic Parquet, ImageFolder and LLaVA-style
 * folders, built with the simulator
 * by `mmif build --config F --local` with no hand conversion (issue 29), from local disk and from
 * versitygw: the fixtures written by the real `datasets` library and Python's zipfile
 * (test/fixtures/hub/make_hub_fixtures.py). Each layout gives accepted samples whose output image is
 * the source's after normalisation (MultiUI's split gzip'd tar extracted once at planning), the accounting identity holds, and the bad inputs (a null image
 * cell, a damaged row group, encrypted and corrupt zip members) are named where a user looks.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseBuildConfig, type BuildConfigInput } from '../../config/buildConfig.js';
import type { ImageOrigin } from '../../domain/sample.js';
import { sourceImageConfig, sourceNames } from '../../config/sourceConfig.js';
import { normalizeImage } from '../../image/normalize.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import type { InstructRecord, RejectRecord } from '../../output/contracts/records.js';
import { instructRecordFromLine } from '../../output/formats/sharegpt.js';
import { openSources } from '../../sources/source.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { LocalStore } from '../../storage/localStore.js';
import { getJson, type ObjectStore } from '../../storage/objectStore.js';
import { openStore } from '../../storage/openStore.js';
import { completedExtractions } from '../../sources/readers/tarGzExtraction.js';
import type { S3Options } from '../../storage/s3Store.js';
import { assertAccounting } from '../harness/datasetChecks.js';
import { runMmif } from '../harness/mmifCli.js';
import { startS3Server, useS3Env, type S3Server } from '../harness/s3Server.js';

const HUB = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'hub', 'data');
const M4 = 'hf-cache/datasets--HuggingFaceM4--ChartQA/snapshots/b605b6e08b57faf4359aeb2fe6a3ca595f99b6c5';
const GEO_FILES = ['qa_tuning.json', 'alignment.json'];

/** Every layout, with the records each holds (what `read` must count). */
const LAYOUTS: Array<{ source: Record<string, unknown> & { type: string }; dir: string; read: number }> = [
  { dir: M4, source: { type: 'chartqa' }, read: 4 },
  { dir: 'chartqa-lmms', source: { type: 'chartqa', splits: ['test'] }, read: 3 },
  { dir: 'chartqa-masry', source: { type: 'chartqa' }, read: 4 },
  { dir: 'rico-screen2words', source: { type: 'rico' }, read: 4 },
  { dir: 'geo170k-hub', source: { type: 'geo170k', files: GEO_FILES }, read: 4 },
  { dir: 'geo170k-onevision', source: { type: 'geo170k', files: GEO_FILES }, read: 4 },
  { dir: 'allava-hub', source: { type: 'allava' }, read: 4 },
  { dir: 'allava-onevision15', source: { type: 'allava' }, read: 4 },
  { dir: 'cc3m-wds', source: { type: 'cc3m' }, read: 5 },
  // Both release files by default; three of the six records are tasks kept (webqa, embed_qa, meta_generate).
  { dir: 'multiui-hub', source: { type: 'multiui' }, read: 6 },
  // The same records and other screenshots in one gzip'd tar cut in three parts, as yuanshengni/MultiUI ships them: extracted at planning.
  { dir: 'multiui-tgz', source: { type: 'multiui' }, read: 6 },
  // ImageFolder (split folders with metadata.jsonl; metadata.csv; metadata.parquet; no metadata) and LLaVA-style data.
  { dir: 'imagefolder-splits', source: { type: 'imagefolder' }, read: 5 },
  { dir: 'imagefolder-csv', source: { type: 'imagefolder' }, read: 3 },
  { dir: 'imagefolder-parquet', source: { type: 'imagefolder' }, read: 3 },
  { dir: 'imagefolder-plain', source: { type: 'imagefolder' }, read: 3 },
  // A JSON array and JSON lines (one text-only record, filtered), images in a folder; JSON lines with the images in a zip.
  { dir: 'llava-folder', source: { type: 'llava', imageDir: 'images' }, read: 4 },
  { dir: 'llava-zip', source: { type: 'llava', imageDir: 'images' }, read: 3 },
  { dir: 'parquet/llava', source: { type: 'parquet' }, read: 4 },
  { dir: 'parquet/paths', source: { type: 'parquet' }, read: 3 },
  { dir: 'parquet/nulls', source: { type: 'parquet' }, read: 3 },
  // Six rows, two of them in the damaged row group: read counts the four others and the problem.
  { dir: 'parquet/damaged', source: { type: 'parquet' }, read: 5 },
  { dir: 'zips-bad', source: { type: 'parquet' }, read: 3 },
];

/** What `image_origin` names, by layout: the Parquet file and row, the zip and member, the tar and record. */
const ORIGIN_SHAPES: Array<[string, RegExp]> = [
  [M4, /^data\/train-\d{5}-of-\d{5}\.parquet row \d+ \(row group \d+\)$/],
  ['chartqa-masry', /\.parquet row \d+ \(row group \d+\)$/],
  ['rico-screen2words', /\.parquet row \d+ \(row group \d+\)$/],
  ['geo170k-hub', /^images\.zip \S+\.png$/],
  ['allava-hub', /^allava_laion\/image_chunks\/images_\d+\.zip \S+$/],
  ['cc3m-wds', /^cc3m-(train|validation)-0000\.tar \S+\.jpg$/],
  ['parquet/llava', /\.parquet row \d+ \(row group \d+\)$/],
  ['llava-zip', /^images\.zip images\/coco\/\d\.jpg$/],
  ['multiui-tgz', /^multiui\.tar\.gz screenshots\/[a-z_]+\/\d\.png$/],
];

let dir: string;
let s3: S3Server | undefined;

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-hub-'));
});

after(async () => {
  await s3?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The split MultiUI archive was extracted once into its root, whole: every member, the completion marker, nothing refused. */
async function assertExtracted(store: ObjectStore): Promise<void> {
  const [extraction, ...more] = await completedExtractions(store);
  assert.equal(more.length, 0);
  assert.deepEqual(
    extraction!.parts.map((p) => p.key),
    ['multiui.tar.gz.00', 'multiui.tar.gz.01', 'multiui.tar.gz.02'],
  );
  assert.equal(extraction!.members, 8, JSON.stringify(extraction));
  assert.deepEqual(extraction!.refused, []);
  assert.equal(extraction!.damage, undefined);
  assert.ok(await store.exists('.mmif-extracted/multiui.tar.gz/stage1_data.json'));
}

function config(buildId: string, root: (sub: string) => string, s3Options?: S3Options): BuildConfigInput {
  return {
    buildId,
    seed: 3,
    output: path.join(dir, 'out'),
    sources: LAYOUTS.map(({ dir: sub, source }) => ({ ...source, uri: root(sub), quota: 10 })),
    maxSamples: 200,
    shardSize: 8,
    models: { default: { model: 'mmif-sim-vlm' } },
    ...(s3Options ? { s3: s3Options } : {}),
  } as BuildConfigInput;
}

const lines = <T>(text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as T);

async function buildAndCheck(buildId: string, input: BuildConfigInput, env: Record<string, string | undefined>): Promise<void> {
  const file = path.join(dir, `${buildId}.json`);
  await writeFile(file, JSON.stringify(input));
  const result = await runMmif(['build', '--config', file, '--local'], {
    env: { ...env, OPENAI_BASE_URL: undefined, TEMPORAL_ADDRESS: undefined, MMIF_TASK_QUEUE: undefined },
    cwd: dir,
  });
  assert.equal(result.code, 0, result.stdout + result.stderr);
  assert.match(result.stdout, new RegExp(`build ${buildId}: COMPLETED`));

  const out = new LocalStore(path.join(dir, 'out'));
  const layout = buildLayout(buildId);
  const report = (await getJson<BuildReport>(out, layout.report))!;
  const records: InstructRecord[] = [];
  const rejects: RejectRecord[] = [];
  for (let shard = 0; shard < report.shards.planned; shard++) {
    records.push(...(await out.get(layout.instructJsonl(shard)))!.toString('utf8').split('\n').filter(Boolean).map(instructRecordFromLine));
    rejects.push(...lines<RejectRecord>((await out.get(layout.rejects(shard)))?.toString('utf8') ?? ''));
  }

  // Every layout gives accepted samples, and each record's image is its source's after normalisation.
  const parsed = parseBuildConfig(input);
  const readers = openSources(parsed.sources, parsed.s3 ?? {});
  const expected = new Map<string, string>();
  const origins = new Map<string, ImageOrigin>();
  for (const [i, reader] of readers.entries()) {
    for await (const segment of reader.segments()) {
      for (let k = 0; k < segment.sampleIds.length; k++) {
        const sample = segment.sample(k);
        try {
          const image = await normalizeImage(await reader.readImage(sample.image), sourceImageConfig(parsed.image, parsed.sources[i]!));
          if (image.ok) expected.set(sample.sampleId, image.sha256);
          origins.set(sample.sampleId, reader.origin(sample.image.locator));
        } catch {
          // a bad input: its reject is checked below
        }
      }
    }
  }
  for (const [i, { dir: sub }] of LAYOUTS.entries()) {
    const accepted = report.accounting[i]!.accepted;
    assert.ok(accepted > 0, `${sub} gave accepted samples: ${JSON.stringify(report.accounting[i])}`);
  }
  assert.ok(records.length > 0);
  // Every record says where its image came from: the file, and the Parquet row or archive member,
  // and the Hub revision when the root is a cache snapshot.
  const names = sourceNames(parsed.sources);
  const layoutOf = (r: InstructRecord) => LAYOUTS[names.indexOf(r.source)]!.dir;
  for (const r of records) {
    const origin = r.image_origin;
    assert.deepEqual(origin, origins.get(r.id), `${r.id}: the origin its source gives after reading the image`);
    const layoutDir = layoutOf(r);
    const embedded = ORIGIN_SHAPES.find(([prefix]) => layoutDir.startsWith(prefix))?.[1];
    if (embedded) assert.match(`${origin.file} ${origin.member ?? ''}`, embedded, `${r.id} (${layoutDir}): ${JSON.stringify(origin)}`);
    if (layoutDir === M4) assert.deepEqual(origin.hub, { repo: 'HuggingFaceM4/ChartQA', revision: 'b605b6e08b57faf4359aeb2fe6a3ca595f99b6c5' });
    else assert.equal(origin.hub, undefined, `${layoutDir} is no Hub snapshot`);
  }
  for (const [prefix] of ORIGIN_SHAPES)
    assert.ok(
      records.some((r) => layoutOf(r).startsWith(prefix)),
      `a record of ${prefix} was checked`,
    );
  for (const r of records) {
    assert.equal(r.image_sha256, expected.get(r.id), `${r.id} (${r.source} ${r.source_id}): the output image is the source's, normalised`);
    const bytes = await out.get(`${buildId}/${r.image_path}`);
    assert.equal(createHash('sha256').update(bytes!).digest('hex'), r.image_sha256, `${r.image_path} holds the image its record names`);
  }

  // Bad input, named where a user looks; the rest kept.
  const reasons = rejects.map((r) => r.reason);
  assert.ok(
    reasons.some((r) => r.startsWith('null-image: train.parquet row 1 (row group 0): the image cell is null')),
    JSON.stringify(reasons),
  );
  assert.ok(
    reasons.some((r) => r.startsWith("zip-encrypted: images.zip member 'images/encrypted.png'")),
    JSON.stringify(reasons),
  );
  assert.ok(
    reasons.some((r) => r.startsWith("corrupt: images.zip member 'images/corrupt.png'")),
    JSON.stringify(reasons),
  );
  const problems = (await out.get(layout.sourceProblems))!.toString('utf8');
  assert.match(problems, /train\.parquet row group 1 \(rows 2-3\) does not decode/);
  await assertAccounting(out, report, Object.fromEntries(LAYOUTS.map((l, i) => [i, l.read])));
}

test('every Hub layout and generic Parquet builds from local disk with `mmif build --local`', async () => {
  // A copy: planning writes the gzip'd tars' extraction cache into their root.
  const hub = path.join(dir, 'hub');
  await cp(HUB, hub, { recursive: true });
  await buildAndCheck(
    'hub-local',
    config('hub-local', (sub) => path.join(hub, sub)),
    {},
  );
  await assertExtracted(new LocalStore(path.join(hub, 'multiui-tgz')));
});

test('the same layouts build from S3 (versitygw), zips and Parquet row groups read by range', async () => {
  s3 = await startS3Server();
  // versitygw's posix backend serves the bucket folder's files as objects.
  await cp(HUB, path.join(s3.dataDir, s3.bucket, 'hub'), { recursive: true });
  const server = s3;
  // Credentials in this process's env too: the test reads the sources itself to know their images.
  const options = useS3Env(server);
  await buildAndCheck(
    'hub-s3',
    config('hub-s3', (sub) => `s3://${server.bucket}/hub/${sub}`, options),
    { AWS_ACCESS_KEY_ID: server.accessKeyId, AWS_SECRET_ACCESS_KEY: server.secretAccessKey, AWS_REGION: server.region, AWS_PROFILE: undefined },
  );
  await assertExtracted(openStore(`s3://${server.bucket}/hub/multiui-tgz`, options));
});

test('a column asked for that the file does not hold: validate exits 2 naming both', async () => {
  const file = path.join(dir, 'missing-column.json');
  const input = config('hub-missing', (sub) => path.join(HUB, sub));
  input.sources = [{ type: 'parquet', uri: path.join(HUB, 'chartqa-masry'), columns: { question: 'prompt' } } as never];
  await writeFile(file, JSON.stringify(input));
  const result = await runMmif(['validate', '--config', file], { cwd: dir });
  assert.equal(result.code, 2, result.stdout + result.stderr);
  assert.match(result.stdout + result.stderr, /columns\.question is 'prompt', but the file holds imgname: string, query: string, label: string, type: string, image: binary/);
});

test('a root where the extraction cache cannot be written: validate and build --local fail in one line naming the root and the cause', async () => {
  const root = path.join(dir, 'read-only-cache');
  await cp(path.join(HUB, 'multiui-tgz'), root, { recursive: true });
  await writeFile(path.join(root, '.mmif-extracted'), 'a file where the cache folder goes');
  const file = path.join(dir, 'cache-refused.json');
  const input = config('hub-cache-refused', () => root);
  input.sources = [{ type: 'multiui', uri: root } as never];
  await writeFile(file, JSON.stringify(input));
  const line = `${root}: cannot write the extraction cache .mmif-extracted/multiui.tar.gz/ of multiui.tar.gz: `;
  for (const args of [['validate'], ['build', '--local']]) {
    const result = await runMmif([...args, '--config', file], {
      env: { OPENAI_BASE_URL: undefined, TEMPORAL_ADDRESS: undefined, MMIF_TASK_QUEUE: undefined },
      cwd: dir,
    });
    const output = result.stdout + result.stderr;
    assert.notEqual(result.code, 0, output);
    const named = output.split('\n').filter((l) => l.includes(line));
    assert.ok(named.length >= 1, `${args.join(' ')}: ${output}`);
    assert.doesNotMatch(output, /^\s+at /m, 'no stack trace');
  }
});
