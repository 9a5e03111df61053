/** Decontamination's pieces: the TSV reader, the index's matching rules, and loading real sets from disk. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { CANDIDATE_BITS, EvalSetIndex, hammingDistance, ngrams, wordsOf } from '../../domain/decontamination.js';
import { isSamePicture, likeness, SAME_PICTURE_WORST } from '../../domain/imageMatch.js';
import { imageFingerprint } from '../../image/perceptualHash.js';
import { COPY_KINDS, copyOf, IMAGE_KINDS, kindImage } from '../fixtures/imageKinds.js';
import { rejectIfContaminated } from '../../pipeline/decontamination.js';
import { DecontaminationSetError } from '../../pipeline/decontaminationSetError.js';
import { tsvRows } from '../../sources/readers/tsv.js';
import { sceneJpeg } from '../fixtures/images.js';

async function rows(chunks: string[]): Promise<string[][]> {
  const out: string[][] = [];
  for await (const row of tsvRows(chunks.map((c) => Buffer.from(c)))) out.push(row);
  return out;
}

test('tsvRows reads pandas-quoted fields (tabs, newlines, doubled quotes), CRLF, and chunks cut anywhere', async () => {
  const text = 'index\tquestion\r\n0\t"Line one\nline ""two""\tstill"\r\n1\tplain é\n';
  const expected = [
    ['index', 'question'],
    ['0', 'Line one\nline "two"\tstill'],
    ['1', 'plain é'],
  ];
  assert.deepEqual(await rows([text]), expected);
  const bytes = Buffer.from(text);
  for (let cut = 1; cut < bytes.length; cut++) {
    const out: string[][] = [];
    for await (const row of tsvRows([bytes.subarray(0, cut), bytes.subarray(cut)])) out.push(row);
    assert.deepEqual(out, expected, `cut at byte ${cut}`);
  }
  assert.deepEqual(await rows(['a\tb']), [['a', 'b']], 'no newline at the end');
});

test('13-grams: a shared run of 13 words matches; 12 do not; a short question matches only itself, on an image close to its own', () => {
  const index = new EvalSetIndex();
  const long = 'Describe the red bicycle leaning on the wall and explain why the owner may have left it there today';
  index.addQuestion({ name: 'mmifeval', index: '7' }, long);
  index.addQuestion({ name: 'mia', index: '3' }, 'Describe the image.');
  assert.equal(wordsOf(long).length, 19);
  const thirteen = wordsOf(long).slice(2, 15).join(' ');
  assert.deepEqual(index.matchText(`Please ${thirteen.toUpperCase()}, in three paragraphs.`), {
    name: 'mmifeval',
    index: '7',
    how: `instruction: shares the 13-gram "${thirteen}"`,
  });
  assert.equal(index.matchText(wordsOf(long).slice(2, 14).join(' ')), undefined, '12 shared words are not a match');
  assert.equal(index.matchText('Describe the image in detail, with two decimals.'), undefined, 'a short question inside a longer text is not a match');
  assert.equal(index.matchText('describe THE image'), undefined, 'a short question alone matches whatever the image: not a match');
  assert.equal(index.matchText('describe THE image', [{ name: 'mia', index: '4' }]), undefined, 'close to another item of the set: not a match');
  assert.deepEqual(index.matchText('describe THE image', [{ name: 'mia', index: '3' }]), {
    name: 'mia',
    index: '3',
    how: 'instruction: the same text as its question, on an image close to its image',
  });
  assert.deepEqual(ngrams(['a', 'b', 'c'], 2), ['a b', 'b c']);
});

test('images: identical bytes by sha256; a re-encoded, resized copy by perceptual hash; another picture not at all', async () => {
  const original = await sceneJpeg(3, 640, 480);
  const copy = await sharp(original).resize({ width: 300 }).jpeg({ quality: 55 }).toBuffer();
  const other = await sceneJpeg(8, 640, 480);
  const dir = await mkdtemp(path.join(tmpdir(), 'mmif-decon-'));
  try {
    const tsv = path.join(dir, 'MMIFEval.tsv');
    await writeFile(tsv, `index\timage\tquestion\n0\t${original.toString('base64')}\tWhat is shown?\n1\t0\tThe same image again, by reference.\n`);
    const config = { decontaminate: [{ uri: tsv, format: 'vlmevalkit-tsv' as const, name: 'mmifeval' }], s3: {} };
    await assert.rejects(rejectIfContaminated(config, { image: original, texts: [] }), { reason: 'contaminated: mmifeval 0: image: identical bytes (sha256)' });
    await assert.rejects(rejectIfContaminated(config, { image: copy, texts: [] }), {
      reason: /^contaminated: mmifeval 0: image: the same picture \(dHash \d+ of 64 bits, pixels within [\d.]+ grey levels, at most 24\)$/,
    });
    assert.deepEqual(await rejectIfContaminated(config, { image: other, texts: ['What is not shown?'] }), []);
    assert.deepEqual(await rejectIfContaminated(config, { image: other, texts: ['what is shown'] }), [], 'the short question on another picture is not a copy');
    await assert.rejects(rejectIfContaminated(config, { texts: [undefined, 'what is shown'], near: [{ name: 'mmifeval', index: '0' }] }), {
      reason: 'contaminated: mmifeval 0: instruction: the same text as its question, on an image close to its image',
    });
    assert.equal(hammingDistance(0b1011n, 0b0110n), 3);

    const badHeader = path.join(dir, 'bad.tsv');
    await writeFile(badHeader, 'id\tpicture\tquestion\n1\tx\ty\n');
    await assert.rejects(rejectIfContaminated({ decontaminate: [{ uri: badHeader, format: 'vlmevalkit-tsv', name: 'bad' }], s3: {} }, { texts: ['x'] }), (err: Error) => {
      assert.ok(err instanceof DecontaminationSetError);
      assert.equal(err.message, `decontaminate 'bad' (${badHeader}): the header row lacks index, image (VLMEvalKit's TSV has index, image, question)`);
      return true;
    });
    await writeFile(path.join(dir, 'a.jpg'), other);
    await writeFile(path.join(dir, 'set.jsonl'), `${JSON.stringify({ id: 'q1', image: 'a.jpg', instruction: 'Count the shapes.' })}\n`);
    const jsonl = { decontaminate: [{ uri: path.join(dir, 'set.jsonl'), format: 'jsonl' as const, name: 'local' }], s3: {} };
    await assert.rejects(rejectIfContaminated(jsonl, { image: other, texts: [] }), { reason: 'contaminated: local q1: image: identical bytes (sha256)' });
    await writeFile(path.join(dir, 'missing.jsonl'), `${JSON.stringify({ id: 'q1', image: 'nope.jpg' })}\n`);
    await assert.rejects(
      rejectIfContaminated({ decontaminate: [{ uri: path.join(dir, 'missing.jsonl'), format: 'jsonl', name: 'm' }], s3: {} }, { texts: [] }),
      /decontaminate 'm' .* line 1: image 'nope.jpg' not found/,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('the same picture: every kind of copy of photos, charts, screens and diagrams is confirmed; distinct images of a kind are not, even when their dHashes are close', async () => {
  for (const kind of IMAGE_KINDS) {
    const images = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => kindImage(kind, i)));
    const prints = await Promise.all(images.map((image) => imageFingerprint(image)));
    for (const [i, how] of COPY_KINDS.entries()) {
      const copy = await imageFingerprint(await copyOf(images[i]!, how, i));
      const like = likeness(prints[i]!.rendering, copy.rendering);
      assert.ok(hammingDistance(prints[i]!.dHash, copy.dHash) <= CANDIDATE_BITS && isSamePicture(like), `${kind} ${i}, ${how}: ${JSON.stringify(like)}`);
    }
    for (let i = 0; i < prints.length; i++) {
      for (let j = i + 1; j < prints.length; j++) {
        const like = likeness(prints[i]!.rendering, prints[j]!.rendering);
        assert.ok(!isSamePicture(like), `${kind} ${i} and ${j} are distinct: ${JSON.stringify(like)}`);
      }
    }
  }
});

test('charts whose dHashes are 12 bits or fewer apart (what the dHash threshold alone called copies) are told apart', async () => {
  const prints = await Promise.all(Array.from({ length: 24 }, async (_, i) => imageFingerprint(await kindImage('chart', i))));
  let close = 0;
  for (let i = 0; i < prints.length; i++) {
    for (let j = i + 1; j < prints.length; j++) {
      if (hammingDistance(prints[i]!.dHash, prints[j]!.dHash) > 12) continue;
      close += 1;
      assert.ok(!isSamePicture(likeness(prints[i]!.rendering, prints[j]!.rendering)), `charts ${i} and ${j}`);
    }
  }
  assert.ok(close >= 3, `${close} close pairs among 24 charts`);
});

test('the same chart in another palette is another picture (its grey rendering is the same); the chart with its hues turned 25° is the same', async () => {
  // Slice colours of one lightness and chroma (one colour turned in LCh by sharp), so that any two
  // palettes give the same grey rendering and only colour tells them apart.
  const shade = async (turn: number) => {
    const px = await sharp({ create: { width: 1, height: 1, channels: 3, background: { r: 200, g: 60, b: 60 } } })
      .modulate({ hue: turn })
      .raw()
      .toBuffer();
    return `rgb(${px[0]},${px[1]},${px[2]})`;
  };
  const pie = async (turns: readonly number[]) => {
    const colours = await Promise.all(turns.map(shade));
    const at = (k: number) => `${(200 + 110 * Math.cos((k * 2 * Math.PI) / 3)).toFixed(1)},${(150 + 110 * Math.sin((k * 2 * Math.PI) / 3)).toFixed(1)}`;
    const slices = colours.map((fill, i) => `<path d="M200,150 L${at(i)} A110,110 0 0 1 ${at(i + 1)} Z" fill="${fill}" stroke="white" stroke-width="3"/>`);
    return sharp(Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="400" height="300"><rect width="400" height="300" fill="white"/>${slices.join('')}</svg>`))
      .jpeg()
      .toBuffer();
  };
  const image = await pie([0, 120, 240]);
  const original = await imageFingerprint(image);
  const turned = likeness(original.rendering, (await imageFingerprint(await sharp(image).modulate({ hue: 25 }).jpeg().toBuffer())).rendering);
  assert.ok(isSamePicture(turned), JSON.stringify(turned));
  for (const palette of [
    [200, 20, 290],
    [180, 300, 60],
  ]) {
    const like = likeness(original.rendering, (await imageFingerprint(await pie(palette))).rendering);
    assert.ok(like.worst <= SAME_PICTURE_WORST, `the grey renderings coincide: ${JSON.stringify(like)}`);
    assert.ok(!isSamePicture(like), `palette ${palette.join('/')}: ${JSON.stringify(like)}`);
  }
});
