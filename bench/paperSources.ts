/**
 * The paper's six sources, generated in their release layouts at realistic record counts, for
 * bench/paperScale.ts: CC3M as an img2dataset webdataset (tars of 10,000 records with `.parquet` side
 * files and `_stats.json`, 5% failed downloads), every record its own image; ALLaVA, MultiUI, ChartQA
 * and Geo170K as their JSON releases, every record its own question over a pool of images (their
 * releases ask several questions about one image too). Images are procedural 64x64 JPEGs/PNGs (~0.2 ms
 * each; a 256 px render per record would take most of an hour for 300k records on 2 cores): the build
 * lowers minShortSide for them.
 */
import { once } from 'node:events';
import { createWriteStream, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import type { BuildConfigInput } from '../config/buildConfig.js';
import { img2datasetParquet, packTar, sideFileRow, type TarFile } from '../test/fixtures/cc3m.js';
import { GEO_PREAMBLE, GEO_STEMS } from '../test/fixtures/geo170k.js';

const IMAGE_SIDE = 64;
const PER_TAR = 10_000;
const FAILED_EVERY = 20;
const POOL = 4_000;

/** Record counts of each generated source. */
interface PaperSourceSizes {
  cc3m: number;
  allava: number;
  multiui: number;
  chartqa: number;
  geo170k: number;
}

/** A distinct small image for `seed`: gradients and blocks whose colours follow the seed. */
async function procedural(seed: number, format: 'jpeg' | 'png'): Promise<Buffer> {
  const px = Buffer.alloc(IMAGE_SIDE * IMAGE_SIDE * 3);
  const a = (seed * 37) % 256;
  const b = (seed * 91 + (seed >> 8)) % 256;
  const c = (seed * 13 + (seed >> 16) * 7) % 256;
  for (let y = 0; y < IMAGE_SIDE; y++) {
    for (let x = 0; x < IMAGE_SIDE; x++) {
      const o = (y * IMAGE_SIDE + x) * 3;
      px[o] = (a + 3 * x) & 255;
      px[o + 1] = (b + 3 * y) & 255;
      px[o + 2] = (c + ((x >> 3) ^ (y >> 3)) * 29 + (seed % 7) * ((x * y) >> 5)) & 255;
    }
  }
  const image = sharp(px, { raw: { width: IMAGE_SIDE, height: IMAGE_SIDE, channels: 3 } });
  return format === 'jpeg' ? image.jpeg({ quality: 85 }).toBuffer() : image.png().toBuffer();
}

async function writeJsonArray(file: string, count: number, record: (i: number) => unknown): Promise<void> {
  mkdirSync(path.dirname(file), { recursive: true });
  const out = createWriteStream(file);
  out.write('[\n');
  for (let i = 0; i < count; i++) {
    if (!out.write(`${JSON.stringify(record(i))}${i + 1 < count ? ',' : ''}\n`)) await once(out, 'drain');
  }
  out.end(']\n');
  await once(out, 'finish');
}

async function writePool(dir: string, name: (i: number) => string, format: 'jpeg' | 'png', seedBase: number): Promise<void> {
  for (let i = 0; i < POOL; i++) {
    const file = path.join(dir, name(i));
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, await procedural(seedBase + i, format));
  }
}

/** Generates the sources under `root` once (a marker file per source says it is complete); returns their folders. */
export async function paperSources(root: string, sizes: PaperSourceSizes, log: (line: string) => void): Promise<Record<keyof PaperSourceSizes, string>> {
  const dirs = Object.fromEntries(Object.entries(sizes).map(([name, n]) => [name, path.join(root, `${name}-${n}`)])) as Record<keyof PaperSourceSizes, string>;
  const once = async (name: keyof PaperSourceSizes, make: (dir: string) => Promise<void>) => {
    const dir = dirs[name];
    if (existsSync(path.join(dir, '.complete'))) return;
    const started = performance.now();
    mkdirSync(dir, { recursive: true });
    await make(dir);
    writeFileSync(path.join(dir, '.complete'), '');
    log(`generated ${name}: ${sizes[name]} records in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  };

  await once('cc3m', async (dir) => {
    for (let t = 0; t < Math.ceil(sizes.cc3m / PER_TAR); t++) {
      const shard = String(t).padStart(5, '0');
      const rows: Record<string, unknown>[] = [];
      const files: TarFile[] = [];
      for (let i = 0; i < PER_TAR && t * PER_TAR + i < sizes.cc3m; i++) {
        const key = `${shard}${String(i).padStart(4, '0')}`;
        const caption = `a photograph of scene ${t * PER_TAR + i} with a gradient sky over a patterned ground`;
        const failed = i % FAILED_EVERY === 7;
        const meta = sideFileRow({ key, caption }, { failed, width: IMAGE_SIDE, height: IMAGE_SIDE });
        rows.push(meta);
        // img2dataset writes only successful downloads into the tar (writer.py WebDatasetSampleWriter).
        if (!failed)
          files.push(
            { path: `${key}.jpg`, data: await procedural(t * PER_TAR + i, 'jpeg') },
            { path: `${key}.txt`, data: caption },
            { path: `${key}.json`, data: JSON.stringify(meta) },
          );
      }
      writeFileSync(path.join(dir, `${shard}.tar`), packTar(files));
      writeFileSync(path.join(dir, `${shard}.parquet`), await img2datasetParquet(rows));
      const failedCount = rows.filter((r) => r.status !== 'success').length;
      writeFileSync(path.join(dir, `${shard}_stats.json`), JSON.stringify({ count: rows.length, successes: rows.length - failedCount, failed_to_download: failedCount }));
    }
  });

  await once('allava', async (dir) => {
    await writePool(dir, (i) => `allava_laion/images/${100_000_000 + i}.jpeg`, 'jpeg', 1_000_000);
    await writeJsonArray(path.join(dir, 'allava_laion/ALLaVA-Instruct-LAION-4V.json'), sizes.allava, (i) => ({
      id: `allava_laion_inst_${200_000_000 + i}`,
      image: `allava_laion/images/${100_000_000 + (i % POOL)}.jpeg`,
      conversations: [
        { from: 'human', value: `<image>\nWhat does detail number ${i} of this photograph suggest about where and when it was taken?` },
        { from: 'gpt', value: `Detail ${i} suggests an outdoor scene in the late afternoon, judging by the long shadows and the warm light.` },
      ],
    }));
  });

  await once('multiui', async (dir) => {
    await writePool(dir, (i) => `screenshots/page_${i}.jpg`, 'jpeg', 2_000_000);
    const tasks = ['webqa', 'embed_qa', 'meta_generate', 'elem_ground', 'heading_ocr'];
    await writeJsonArray(path.join(dir, 'stage1/multiui_train.json'), sizes.multiui, (i) => ({
      id: `${tasks[i % tasks.length]}_${String(i).padStart(7, '0')}`,
      image: `screenshots/page_${i % POOL}.jpg`,
      conversations: [
        { from: 'human', value: `<image>\nWhat is the label of button number ${i} on this web page?` },
        { from: 'gpt', value: `The button reads "Continue ${i}".` },
      ],
    }));
  });

  await once('chartqa', async (dir) => {
    const train = path.join(dir, 'ChartQA Dataset/train');
    await writePool(train, (i) => `png/${i}.png`, 'png', 3_000_000);
    const human = Math.round(sizes.chartqa * 0.26); // the release: 7,398 human and 20,901 augmented train questions
    const record = (offset: number) => (i: number) => ({
      imgname: `${(i + offset) % POOL}.png`,
      query: `What is the value of bar ${i + offset} in this chart?`,
      label: String((i + offset) % 97),
    });
    await writeJsonArray(path.join(train, 'train_human.json'), human, record(0));
    await writeJsonArray(path.join(train, 'train_augmented.json'), sizes.chartqa - human, record(human));
  });

  await once('geo170k', async (dir) => {
    await writePool(dir, (i) => `images/geoqa_plus/${i}.png`, 'png', 4_000_000);
    await writeJsonArray(path.join(dir, 'qa_tuning.json'), sizes.geo170k, (i) => ({
      id: String(i),
      image: `geoqa_plus/${i % POOL}.png`,
      conversations: [
        { from: 'human', value: `<image>\n${GEO_PREAMBLE}\nQuestion: ${GEO_STEMS[i % GEO_STEMS.length]} (figure ${i})\nChoices:\nA:30°\nB:40°\nC:50°\nD:60°` },
        { from: 'gpt', value: `Reasoning for figure ${i}. Therefore, the answer is: C.\nAnswer:C` },
      ],
    }));
  });
  return dirs;
}

/** The record counts the paper build's sources are generated at (and reused from, once generated). */
export const PAPER_SOURCE_SIZES: PaperSourceSizes = { cc3m: 300_000, allava: 500_000, multiui: 50_000, chartqa: 28_299, geo170k: 60_000 };

/** The paper's per-source record targets (instruct and dpo alike), before scaling: the authors' `mix-cc3m_13k+dive_4k+allava_6k`. */
const PAPER_MIX = { cc3m: 13_000, allava: 6_000, multiui: 1_334, chartqa: 1_333, geo170k: 1_333 } as const;

/** Records at `scale` of `n`, at least one. */
export const scaled = (n: number, scale: number): number => Math.max(1, Math.round(n * scale));

/** The paper build's sources, targets (23,000 + 23,000) and sample cap at `scale` of its size, over `paperSources`' folders. */
export function paperMix(sources: Record<keyof PaperSourceSizes, string>, scale: number): Pick<BuildConfigInput, 'sources' | 'targets' | 'maxSamples'> {
  const goals = (n: number) => ({ instruct: scaled(n, scale), dpo: scaled(n, scale) });
  const image = { minShortSide: IMAGE_SIDE / 2 };
  return {
    sources: [
      { type: 'cc3m', uri: sources.cc3m, layout: 'webdataset', targets: goals(PAPER_MIX.cc3m), image },
      { type: 'allava', uri: sources.allava, files: ['allava_laion/ALLaVA-Instruct-LAION-4V.json'], targets: goals(PAPER_MIX.allava), image },
      { type: 'multiui', uri: sources.multiui, files: ['stage1/multiui_train.json'], targets: goals(PAPER_MIX.multiui), image },
      { type: 'chartqa', uri: sources.chartqa, attachTables: false, targets: goals(PAPER_MIX.chartqa), image },
      { type: 'geo170k', uri: sources.geo170k, targets: goals(PAPER_MIX.geo170k), image },
    ],
    targets: goals(23_000),
    maxSamples: scaled(23_000, scale) * 4,
  };
}
