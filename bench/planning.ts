// Planning at CC3M scale: plans builds over a generated img2dataset webdataset of 30k, 100k and 300k
// records (tars of 10,000 with their `.parquet` side files and `_stats.json`; 5% failed downloads), on
// local disk and on versitygw, each plan in a fresh process: `parquet` reads the side files, no tar
// byte; `streamed` streams every tar (no side files). Reports planning wall and CPU time and peak RSS,
// then what the shards read instead (the selected images, 16 at a time). --image-kib pads images to
// that size; --side-files-only writes only what planning reads (each tar a sparse file of its real
// size, shards skipped): how planning at 3.3M records runs (bench/README.md).
// Run:   npx tsx bench/planning.ts [--samples 1000] [--sizes 30000,100000,300000] [--modes parquet,streamed] [--image-kib 24] [--no-s3]
// Needs tools/venv with pyarrow (`bash tools/install.sh test`) and, for S3, tools/bin/versitygw.
import { spawn } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { parseBuildConfig } from '../config/buildConfig.js';
import { buildLayout } from '../storage/buildLayout.js';
import { makeBuildPlan } from '../pipeline/planning/planBuild.js';
import { openSource } from '../sources/source.js';
import type { SourceSample } from '../domain/sample.js';
import { LocalStore } from '../storage/localStore.js';
import { loadAverage } from './harness.js';
import { getJson } from '../storage/objectStore.js';
import { startS3Server, useS3Env } from '../test/harness/s3Server.js';
import { img2datasetParquet, packTar, sideFileRow, type TarFile } from '../test/fixtures/cc3m.js';

const { values } = parseArgs({
  options: {
    samples: { type: 'string', default: '1000' },
    sizes: { type: 'string', default: '30000,100000,300000' },
    modes: { type: 'string', default: 'parquet,streamed' },
    'image-kib': { type: 'string', default: '0' },
    'no-s3': { type: 'boolean' },
    'side-files-only': { type: 'boolean' },
    child: { type: 'string' },
  },
});
const PER_TAR = 10_000;
const FAILED_EVERY = 20;
const ROOT = path.join(process.env.TMPDIR ?? tmpdir(), 'mmif-bench', 'planning');
const IMAGE_KIB = Number(values['image-kib']);
/** Datasets of padded images live apart from the tiny-image ones. */
const SIDE_FILES_ONLY = values['side-files-only'] === true;
const SUFFIX = SIDE_FILES_ONLY ? '-side' : IMAGE_KIB > 0 ? `-${IMAGE_KIB}k` : '';
/** What a sparse stand-in tar counts per success: img2dataset's 256 px JPEGs are ~10-30 KB. */
const SPARSE_KIB_PER_RECORD = 24;

interface ChildResult {
  planMs: number;
  planCpuMs: number;
  planPeakRssMiB: number;
  selected: number;
  filtered: Record<string, number>;
  imagesMs: number;
  imagesReadMiB: number;
  peakRssMiB: number;
}

if (values.child) await child(JSON.parse(values.child) as { uri: string; samples: number; s3?: object; skipImages?: boolean });
else await main();

async function main(): Promise<void> {
  const sizes = values.sizes.split(',').map(Number);
  const modes = values.modes.split(',') as Array<'parquet' | 'streamed'>;
  const tarCount = Math.ceil(Math.max(...sizes) / PER_TAR);
  const full = await generate(tarCount);
  const datasets: Record<string, string> = {};
  for (const size of sizes) {
    for (const mode of SIDE_FILES_ONLY ? (['parquet'] as const) : (['parquet', 'streamed'] as const)) {
      const dir = path.join(ROOT, `${mode}-${size}${SUFFIX}`);
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
      for (let t = 0; t < Math.ceil(size / PER_TAR); t++) {
        const shard = String(t).padStart(5, '0');
        // Hard links: the same bytes, no copy, and no symlink for the reader to judge.
        for (const file of mode === 'parquet' ? [`${shard}.tar`, `${shard}.parquet`, `${shard}_stats.json`] : [`${shard}.tar`]) {
          linkSync(path.join(full, file), path.join(dir, file));
        }
      }
      datasets[`${mode}-${size}`] = dir;
    }
  }
  const samples = Number(values.samples);
  console.log(`planning ${samples} samples; tars of ${PER_TAR} records, ${tarBytes(full)} MiB per tar; load ${loadAverage(1)}`);
  console.log(
    '| backend | records | dataset MiB | mode | plan s | plan CPU s | plan peak RSS MiB | selected | failed downloads counted | shards: read the selected images s | shards: MiB read | load |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
  const backends: Array<{ name: string; uri: (dir: string) => Promise<string>; s3?: object; stop?: () => Promise<void> }> = [{ name: 'local', uri: async (dir) => dir }];
  if (!values['no-s3']) {
    const server = await startS3Server();
    const s3 = useS3Env(server); // credentials in this process's env, inherited by the children
    backends.push({
      name: 'versitygw',
      s3,
      stop: () => server.stop(),
      uri: async (dir) => {
        // The posix backend serves the bucket folder's files as objects: link the dataset in.
        const prefix = path.basename(dir);
        const target = path.join(server.dataDir, server.bucket, prefix);
        mkdirSync(target, { recursive: true });
        for (const file of readdirSync(dir)) if (!existsSync(path.join(target, file))) linkSync(path.join(dir, file), path.join(target, file));
        return `s3://${server.bucket}/${prefix}`;
      },
    });
  }
  try {
    for (const backend of backends) {
      for (const size of sizes) {
        for (const mode of modes) {
          const dir = datasets[`${mode}-${size}`]!;
          const r = await runChild({ uri: await backend.uri(dir), samples, s3: backend.s3, skipImages: SIDE_FILES_ONLY });
          const failed =
            Object.entries(r.filtered)
              .map(([k, v]) => `${k.replace('img2dataset-', '')} ${v}`)
              .join(', ') || 'none (not in the tars)';
          console.log(
            `| ${backend.name} | ${size} | ${Math.round(tarBytes(dir) * Math.ceil(size / PER_TAR))} | ${mode} | ${(r.planMs / 1000).toFixed(2)} | ${(r.planCpuMs / 1000).toFixed(2)} | ${r.planPeakRssMiB} | ${r.selected} | ${failed} | ${(r.imagesMs / 1000).toFixed(2)} | ${r.imagesReadMiB} | ${loadAverage(1)} |`,
          );
        }
      }
    }
  } finally {
    for (const b of backends) await b.stop?.();
  }
}

function tarBytes(dir: string): number {
  return Math.round(statSync(path.join(dir, '00000.tar')).size / 2 ** 20);
}

/** The full dataset, generated once (a marker file says it is complete). */
async function generate(tarCount: number): Promise<string> {
  const dir = path.join(ROOT, `full-${tarCount}${SUFFIX}`);
  if (existsSync(path.join(dir, 'complete'))) return dir;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  // One tiny JPEG for every record: planning never decodes images, and reading them is timed apart.
  const tiny = SIDE_FILES_ONLY
    ? Buffer.alloc(0)
    : await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 90, g: 140, b: 200 } } })
        .jpeg()
        .toBuffer();
  // Padding after the JPEG's end marker: decoders ignore it, and the shards read only bytes here.
  const jpeg = IMAGE_KIB > 0 ? Buffer.concat([tiny, Buffer.alloc(Math.max(0, IMAGE_KIB * 1024 - tiny.length))]) : tiny;
  for (let t = 0; t < tarCount; t++) {
    const shard = String(t).padStart(5, '0');
    const rows: Record<string, unknown>[] = [];
    const files: TarFile[] = [];
    for (let i = 0; i < PER_TAR; i++) {
      const key = `${shard}${String(i).padStart(4, '0')}`;
      const caption = `a generated scene number ${t * PER_TAR + i}`;
      const failed = i % FAILED_EVERY === 7;
      const meta = sideFileRow({ key, caption }, { failed, width: 64, height: 48 });
      rows.push(meta);
      // img2dataset writes only successful downloads into the tar (writer.py WebDatasetSampleWriter).
      if (!failed && !SIDE_FILES_ONLY)
        files.push({ path: `${key}.jpg`, data: jpeg }, { path: `${key}.txt`, data: caption }, { path: `${key}.json`, data: JSON.stringify(meta, null, 4) });
    }
    const failedCount = rows.filter((r) => r.status !== 'success').length;
    if (SIDE_FILES_ONLY) {
      writeFileSync(path.join(dir, `${shard}.tar`), '');
      truncateSync(path.join(dir, `${shard}.tar`), (PER_TAR - failedCount) * SPARSE_KIB_PER_RECORD * 1024);
    } else {
      writeFileSync(path.join(dir, `${shard}.tar`), packTar(files));
    }
    writeFileSync(path.join(dir, `${shard}.parquet`), await img2datasetParquet(rows));
    writeFileSync(
      path.join(dir, `${shard}_stats.json`),
      JSON.stringify(
        {
          count: PER_TAR,
          successes: PER_TAR - failedCount,
          failed_to_download: failedCount,
          failed_to_resize: 0,
          status_dict: { success: PER_TAR - failedCount, 'HTTP Error 404': failedCount },
        },
        null,
        4,
      ),
    );
    process.stdout.write(`\rgenerated ${t + 1}/${tarCount} tars`);
  }
  process.stdout.write('\n');
  writeFileSync(path.join(dir, 'complete'), '');
  return dir;
}

async function runChild(args: { uri: string; samples: number; s3?: object; skipImages?: boolean }): Promise<ChildResult> {
  const proc = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', JSON.stringify(args)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise<number | null>((done) => proc.on('close', done));
  if (code !== 0) throw new Error(`planning child exited with ${code}`);
  return JSON.parse(out.trim().split('\n').at(-1)!) as ChildResult;
}

/** Bytes this process has read by read(2) and the like, files and sockets alike (/proc/self/io rchar). */
function bytesRead(): number {
  return Number(/rchar:\s+(\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))![1]);
}

function peakRssMiB(): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return Math.round(Number(match![1]) / 1024);
}

/** One plan in this process, then the selected images read as the shards would. */
async function child({ uri, samples, s3 = {}, skipImages = false }: { uri: string; samples: number; s3?: object; skipImages?: boolean }): Promise<void> {
  const out = path.join(ROOT, `out-${process.pid}`);
  rmSync(out, { recursive: true, force: true });
  try {
    const config = parseBuildConfig({
      buildId: 'plan-bench',
      output: out,
      s3,
      sources: [{ type: 'cc3m', uri, layout: 'webdataset' }],
      maxSamples: samples,
      models: { default: { model: 'mmif-sim-vlm' } },
    });
    const store = new LocalStore(out);
    const layout = buildLayout(config.buildId);
    const source = openSource(config.sources[0]!, 0, config.s3);
    const start = performance.now();
    const cpuStart = process.cpuUsage();
    const plan = await makeBuildPlan(config, store, layout, [source]);
    const planMs = performance.now() - start;
    const cpu = process.cpuUsage(cpuStart);
    const planPeakRssMiB = peakRssMiB();
    const filtered = (await getJson<Record<string, Record<string, number>>>(store, layout.sourceFiltered)) ?? {};

    // The shards' side: each selected image read through a fresh reader (a worker's view), 16 at a time.
    const selected: SourceSample[] = [];
    for (let shard = 0; shard < plan.shardCount; shard++) selected.push(...((await getJson<SourceSample[]>(store, layout.shardPlan(shard))) ?? []));
    const reader = openSource(config.sources[0]!, 0, config.s3);
    const imagesStart = performance.now();
    const readBefore = bytesRead();
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (!skipImages && next < selected.length) {
          const bytes = await reader.readImage(selected[next++]!.image);
          if (bytes.length === 0) throw new Error('empty image');
        }
      }),
    );
    const result: ChildResult = {
      planMs,
      planCpuMs: (cpu.user + cpu.system) / 1000,
      planPeakRssMiB,
      selected: plan.sampleCount,
      filtered: Object.values(filtered)[0] ?? {},
      imagesMs: performance.now() - imagesStart,
      imagesReadMiB: Math.round((bytesRead() - readBefore) / 2 ** 20),
      peakRssMiB: peakRssMiB(),
    };
    console.log(JSON.stringify(result));
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
