/**
 * Decontamination end to end (Temporal dev server, worker, simulator over HTTP): an evaluation set in
 * VLMEvalKit's TSV layout (index, base64 image, question; open-compass/VLMEvalKit docs/en/Development.md)
 * holds a re-encoded, resized copy of a training image, a copy of a training question, and three
 * charts that are not training charts though their dHashes are within 12 bits of three of them (what
 * a perceptual hash alone called copies); the build rejects the first two samples as contaminated,
 * writes neither into any training file, keeps the three charts, and the card counts the rest.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { SAMPLES_DIR } from '../../cli/quickstartConfig.js';
import type { BuildConfigInput } from '../../config/buildConfig.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import type { RejectRecord } from '../../output/contracts/records.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { LocalStore } from '../../storage/localStore.js';
import { LAION_QUESTIONS, writeAllava } from '../fixtures/allava.js';
import { sceneJpeg } from '../fixtures/images.js';
import { kindImage } from '../fixtures/imageKinds.js';
import { CANDIDATE_BITS, hammingDistance } from '../../domain/decontamination.js';
import { likeness, NEAR_MISS_WORST, SAME_PICTURE_WORST } from '../../domain/imageMatch.js';
import { imageFingerprint } from '../../image/perceptualHash.js';
import type { QualityReport } from '../../output/reports/qualityReport.js';
import { startStack, type Stack } from '../harness/stack.js';

let stack: Stack;
let dir: string;

before(async () => {
  stack = await startStack({ simulator: { seed: 3 }, taskQueue: 'mmif-decontamination' });
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-decon-e2e-'));
});

after(async () => {
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('a re-encoded, resized copy of a training image and a copied question in a VLMEvalKit TSV are rejected as contaminated and counted in the card', async () => {
  await writeAllava(new LocalStore(path.join(dir, 'allava')));
  const copied = await readFile(path.join(SAMPLES_DIR, '00000', '000000003.jpg'));
  const { width } = await sharp(copied).metadata();
  const reencoded = await sharp(copied)
    .resize({ width: Math.round(width! * 0.6) })
    .jpeg({ quality: 55 })
    .toBuffer();
  // 13 words: a shorter question matches only together with its image (domain/decontamination.ts).
  const question = LAION_QUESTIONS[2]!.replace('<image>\n', '');
  // Three pairs of distinct charts whose dHashes are within 12 bits: one of each trains, the other is in the set.
  const charts = await Promise.all(Array.from({ length: 40 }, (_, i) => kindImage('chart', i)));
  const prints = await Promise.all(charts.map((c) => imageFingerprint(c)));
  const pairs: Array<[number, number]> = [];
  for (let i = 0; i < charts.length && pairs.length < 3; i++) {
    for (let j = i + 1; j < charts.length && pairs.length < 3; j++) {
      const used = pairs.flat();
      if (!used.includes(i) && !used.includes(j) && hammingDistance(prints[i]!.dHash, prints[j]!.dHash) <= 12) pairs.push([i, j]);
    }
  }
  assert.equal(pairs.length, 3, 'three close pairs among 40 charts');
  await mkdir(path.join(dir, 'charts'));
  for (const [k, [i]] of pairs.entries()) await writeFile(path.join(dir, 'charts', `chart${k}.png`), charts[i]!);
  // And one training chart with a faint box drawn over a bar: close to it, not the same picture (a near miss).
  const { width: w, height: h } = await sharp(charts[pairs[0]![0]]!).metadata();
  const box = `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}"><rect x="${w! * 0.6}" y="${h! * 0.3}" width="${w! * 0.15}" height="${h! * 0.2}" fill-opacity="0.15"/></svg>`;
  const edited = await sharp(charts[pairs[0]![0]]!)
    .composite([{ input: Buffer.from(box) }])
    .png()
    .toBuffer();
  const tsv = path.join(dir, 'MMIFEval.tsv');
  await writeFile(
    tsv,
    [
      'index\timage\tquestion\tcategory',
      `0\t${reencoded.toString('base64')}\tDescribe the picture.\tperception`,
      `1\t${(await sceneJpeg(77, 300, 200)).toString('base64')}\t"${question.replaceAll('"', '""')}"\tperception`,
      '2\t0\tThe same image as item 0, named by its index as VLMEvalKit does.\tperception',
      // Shares a 13-gram with the instruction refined from LAION question 1 (the simulator appends
      // "Explain your answer with reference to what the image shows."), not with the question itself.
      `3\t${(await sceneJpeg(78, 300, 200)).toString('base64')}\tTell me how do they interact? Explain your answer with reference to what the image shows. Be brief.\tperception`,
      ...pairs.map(([, j], k) => `${4 + k}\t${charts[j]!.toString('base64')}\tWhat is the largest value in the chart?\tchart`),
      `7\t${edited.toString('base64')}\tWhich bar is highlighted?\tchart`,
    ].join('\n'),
  );
  const buildId = 'decon';
  const config: BuildConfigInput = {
    buildId,
    seed: 2,
    output: path.join(dir, 'out'),
    sources: [
      { type: 'cc3m', uri: SAMPLES_DIR, layout: 'files', quota: 10 },
      { type: 'allava', uri: path.join(dir, 'allava'), quota: 6 },
      { type: 'cc3m', uri: path.join(dir, 'charts'), quota: 3 },
    ] as BuildConfigInput['sources'],
    maxSamples: 19,
    shardSize: 8,
    decontaminate: [{ uri: tsv, format: 'vlmevalkit-tsv', name: 'mmifeval' }],
    models: { default: { model: 'mmif-sim-vlm' } },
  };
  const report = (await stack.client.workflow.execute('buildDataset', { taskQueue: stack.taskQueue, workflowId: buildId, args: [config] })) as BuildReport;
  assert.equal(report.shards.failed, 0);

  const layout = buildLayout(buildId);
  const root = path.join(dir, 'out');
  const rejects: RejectRecord[] = [];
  const training: string[] = [];
  for (let shard = 0; shard < report.shards.planned; shard++) {
    rejects.push(
      ...(await readFile(path.join(root, layout.rejects(shard)), 'utf8'))
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as RejectRecord),
    );
    training.push(await readFile(path.join(root, layout.instructJsonl(shard)), 'utf8'), await readFile(path.join(root, layout.dpoJsonl(shard)), 'utf8'));
  }
  const contaminated = rejects.filter((r) => r.reason.startsWith('contaminated:'));
  const image = contaminated.find((r) => r.source === 'cc3m-1');
  assert.ok(image, `the resized copy is caught: ${JSON.stringify(contaminated)}`);
  assert.equal(image.source_id, '000000003');
  assert.match(image.reason, /^contaminated: mmifeval 0: image: the same picture \(dHash \d+ of 64 bits, pixels within [\d.]+ grey levels, at most 24\)$/);
  assert.equal(image.stage, 'image');
  const text = contaminated.find((r) => r.source === 'allava' && r.stage === 'image');
  assert.ok(text, `the copied question is caught: ${JSON.stringify(contaminated)}`);
  assert.match(text.reason, /^contaminated: mmifeval 1: instruction: shares the 13-gram "/);
  const refined = contaminated.find((r) => r.stage === 'instruction');
  assert.ok(refined, 'the refined instruction sharing a 13-gram is caught after the instruction stage');
  assert.equal(refined.reason, 'contaminated: mmifeval 3: instruction: shares the 13-gram "how do they interact explain your answer with reference to what the image"');
  assert.equal(contaminated.length, 3, 'nothing else matches');
  for (const r of contaminated) assert.ok(!training.some((t) => t.includes(`"source_id":"${r.source_id}"`)), `${r.source_id} is in no training file`);

  // The refined instruction's sample was rejected after its image stage: its image stays staged, out of images/.
  const jpgs = async (folder: string) =>
    new Set(
      (await readdir(path.join(root, buildId, folder), { recursive: true }))
        .map(String)
        .filter((f) => f.endsWith('.jpg'))
        .map((f) => path.basename(f, '.jpg')),
    );
  const used = new Set(
    training.flatMap((t) => t.split('\n').filter(Boolean)).map((l) => (JSON.parse(l) as { images: string[] }).images[0]!.replace(/^.*\//, '').replace(/\.jpg$/, '')),
  );
  const staged = await jpgs('_work/images');
  assert.deepEqual(await jpgs('images'), used, "images/ holds the written records' images only");
  assert.ok(
    [...staged].some((sha) => !used.has(sha)),
    "the rejected sample's image is staged, not published",
  );
  const card = await readFile(path.join(root, buildId, 'README.md'), 'utf8');
  // The three charts are kept; those that came close are listed as near misses, not removed.
  assert.ok(!contaminated.some((r) => r.source_id.startsWith('chart')), 'no chart is called a copy');
  const quality = JSON.parse(await readFile(path.join(root, buildId, 'quality.json'), 'utf8')) as QualityReport;
  const editedPrint = await imageFingerprint(edited);
  const expected = [...pairs.map(([i, j], k) => ({ index: `${4 + k}`, evalPrint: prints[j]!, trained: i })), { index: '7', evalPrint: editedPrint, trained: pairs[0]![0] }]
    .filter(({ evalPrint, trained }) => {
      const { worst } = likeness(evalPrint.rendering, prints[trained]!.rendering);
      return hammingDistance(evalPrint.dHash, prints[trained]!.dHash) <= CANDIDATE_BITS && worst > SAME_PICTURE_WORST && worst <= NEAR_MISS_WORST;
    })
    .map(({ index }) => index);
  assert.ok(expected.includes('7'), 'the edited chart is a near miss');
  assert.deepEqual(quality.nearMisses.map((m) => m.index).sort(), expected.sort(), JSON.stringify(quality.nearMisses));
  assert.match(
    card,
    new RegExp(`- Decontamination: against mmifeval \\(vlmevalkit-tsv\\); 3 samples rejected as contaminated .*; ${expected.length} near misses kept and listed in quality.json`),
  );
  assert.match(card, /\| contaminated \| 3 \|/);
});
