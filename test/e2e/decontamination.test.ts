/**
 * Decontamination end to end (Temporal dev server, worker, simulator over HTTP): an evaluation set in
 * VLMEvalKit's TSV layout (index, base64 image, question; open-compass/VLMEvalKit docs/en/Development.md)
 * holds a re-encoded, resized copy of a training image and a copy of a training question; the build
 * rejects both samples as contaminated, writes neither into any training file, and the card counts
 * them.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
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
  const question = LAION_QUESTIONS[0]!.replace('<image>\n', '');
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
    ] as BuildConfigInput['sources'],
    maxSamples: 16,
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
  const image = contaminated.find((r) => r.source === 'cc3m');
  assert.ok(image, `the resized copy is caught: ${JSON.stringify(contaminated)}`);
  assert.equal(image.source_id, '000000003');
  assert.match(image.reason, /^contaminated: mmifeval 0: image: perceptual hash \d+ of 64 bits from it \(threshold 12\)$/);
  assert.equal(image.stage, 'image');
  const text = contaminated.find((r) => r.source === 'allava');
  assert.ok(text, 'the copied question is caught');
  assert.equal(text.reason, 'contaminated: mmifeval 1: instruction: the same text as its question');
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
  assert.match(card, /- Decontamination: against mmifeval \(vlmevalkit-tsv\); 3 samples rejected as contaminated/);
  assert.match(card, /\| contaminated \| 3 \|/);
});
