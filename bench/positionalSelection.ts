// An experiment, not the product's planning: what selecting from img2dataset side files would cost if
// the seeded order were defined over positions (tar name, row index) instead of sample ids, so that
// only the row groups holding drawn positions are decoded (bench/notes/2026-11-24-planning-at-cc3m-scale.md,
// idea (a)). Per tar: one ranged GET of the parquet footer (row groups and their row counts); every
// position is ranked by a seeded 52-bit hash of (tar, row), no byte of it read; the lowest ranks are
// drawn, and only their row groups' key, status and caption chunks are fetched (one ranged GET per
// row group) and decoded; failed downloads among them are skipped and more ranks drawn.
// Runs over the datasets bench/planning.ts generates (run that first), local and on versitygw.
//
// Run:   npx tsx bench/positionalSelection.ts [--samples 1000] [--sizes 30000,100000,300000] [--no-s3]
import { existsSync, linkSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { openStore } from '../storage/openStore.js';
import type { S3Options } from '../storage/s3Store.js';
import type { ObjectStore } from '../storage/objectStore.js';
import { parquetMetadataAsync, parquetRead, type AsyncBuffer, type FileMetaData } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { startS3Server, useS3Env } from '../test/harness/s3Server.js';
import { loadAverage } from './harness.js';

const { values } = parseArgs({
  options: { samples: { type: 'string', default: '1000' }, sizes: { type: 'string', default: '30000,100000,300000' }, 'no-s3': { type: 'boolean' } },
});
const ROOT = path.join(process.env.TMPDIR ?? tmpdir(), 'mmif-bench', 'planning');
const SEED = 0;

interface TarFooter {
  tar: string;
  parquet: string;
  size: number;
  /** The side file, each read of it a ranged GET. */
  file: AsyncBuffer;
  footer: FileMetaData;
  /** First row of each row group. */
  groupStarts: number[];
}

function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

function nameHash(name: string): number {
  let h = SEED ^ 0x9747b28c;
  for (let i = 0; i < name.length; i++) h = fmix32(h ^ name.charCodeAt(i));
  return h;
}

/** Seeded rank of (tar, row) in [0, 2^52). */
function positionRank(tarHash: number, row: number): number {
  const hi = fmix32(tarHash ^ Math.imul(row + 1, 0x9e3779b1));
  const lo = fmix32(hi ^ tarHash ^ 0x27d4eb2f ^ row);
  return (hi & 0xfffff) * 2 ** 32 + lo;
}

/** A side file as hyparquet reads it: every slice a ranged GET, its bytes counted in `read`. */
function rangedFile(store: ObjectStore, parquet: string, size: number, read: { bytes: number }): AsyncBuffer {
  return {
    byteLength: size,
    slice: async (start, end = size) => {
      const bytes = await store.getRange(parquet, start, end);
      read.bytes += bytes.length;
      return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
    },
  };
}

async function plan(store: ObjectStore, samples: number): Promise<{ ms: number; footersMs: number; selected: number; drawn: number; groups: number; bytes: number }> {
  const start = performance.now();
  let footersMs = 0;
  const listed = new Map<string, number>();
  for await (const { key, size } of store.list('')) listed.set(key, size);
  const tars = [...listed.keys()].filter((k) => k.endsWith('.tar'));
  const read = { bytes: 0 };
  const footers: TarFooter[] = await Promise.all(
    tars.map(async (tar) => {
      const parquet = tar.replace(/\.tar$/, '.parquet');
      const size = listed.get(parquet)!;
      const file = rangedFile(store, parquet, size, read);
      // Footers are ~30% of an img2dataset side file (column statistics): the last 256 KiB, widened if needed.
      const footer = await parquetMetadataAsync(file, { initialFetchSize: 256 * 1024 });
      const groupStarts: number[] = [];
      let row = 0;
      for (const group of footer.row_groups) {
        groupStarts.push(row);
        row += Number(group.num_rows);
      }
      return { tar, parquet, size, file, footer, groupStarts };
    }),
  );
  footersMs = performance.now() - start;
  // Rank every position (arithmetic only), keep the lowest `want`; draw more if failures leave too few.
  let want = Math.ceil(samples * 1.2);
  let selected: Array<{ key: string; caption: string }> = [];
  let drawn = 0;
  const decoded = new Map<string, Promise<Map<number, { key: string; status: string; caption: string | null }>>>();
  for (;;) {
    const ranks = new Float64Array(want).fill(Infinity);
    const where = new Array<[number, number]>(want);
    let max = 0;
    for (const [t, f] of footers.entries()) {
      const h = nameHash(f.tar);
      const rows = Number(f.footer.num_rows);
      for (let row = 0; row < rows; row++) {
        const r = positionRank(h, row);
        if (r >= ranks[max]!) continue;
        ranks[max] = r;
        where[max] = [t, row];
        for (let i = 0; i < want; i++) if (ranks[i]! > ranks[max]!) max = i;
      }
    }
    const order = [...ranks.keys()].filter((i) => ranks[i] !== Infinity).sort((a, b) => ranks[a]! - ranks[b]!);
    const rows = await Promise.all(
      order.map(async (i) => {
        const [t, row] = where[i]!;
        const f = footers[t]!;
        let g = f.groupStarts.length - 1;
        while (f.groupStarts[g]! > row) g--;
        const id = `${t}:${g}`;
        if (!decoded.has(id)) decoded.set(id, decodeGroup(f, g));
        return (await decoded.get(id)!).get(row)!;
      }),
    );
    drawn = rows.length;
    selected = rows
      .filter((r) => r.status === 'success')
      .slice(0, samples)
      .map((r) => ({ key: r.key, caption: r.caption ?? '' }));
    if (selected.length >= samples || drawn < want) break;
    want = Math.ceil(want * 1.5);
  }
  return { ms: performance.now() - start, footersMs, selected: selected.length, drawn, groups: decoded.size, bytes: read.bytes };
}

/** One row group's key, status and caption chunks, fetched by ranged GETs over them. */
async function decodeGroup(f: TarFooter, group: number): Promise<Map<number, { key: string; status: string; caption: string | null }>> {
  const rowStart = f.groupStarts[group]!;
  const rowEnd = rowStart + Number(f.footer.row_groups[group]!.num_rows);
  const rows = await new Promise<unknown[][]>((resolve, reject) => {
    parquetRead({ file: f.file, metadata: f.footer, columns: ['key', 'status', 'caption'], rowStart, rowEnd, compressors, onComplete: resolve }).catch(reject);
  });
  return new Map(rows.map(([key, status, caption], i) => [rowStart + i, { key: key as string, status: status as string, caption: (caption as string | null) ?? null }]));
}

function peakRssMiB(): number {
  return Math.round(Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024);
}

const sizes = values.sizes.split(',').map(Number);
const samples = Number(values.samples);
const backends: Array<{ name: string; uri: (dir: string) => string; s3: S3Options; stop?: () => Promise<void> }> = [{ name: 'local', uri: (dir) => dir, s3: {} }];
if (!values['no-s3']) {
  const server = await startS3Server();
  const s3 = useS3Env(server);
  backends.push({
    name: 'versitygw',
    s3,
    stop: () => server.stop(),
    uri: (dir) => {
      const prefix = path.basename(dir);
      const target = path.join(server.dataDir, server.bucket, prefix);
      mkdirSync(target, { recursive: true });
      for (const file of readdirSync(dir)) if (!existsSync(path.join(target, file))) linkSync(path.join(dir, file), path.join(target, file));
      return `s3://${server.bucket}/${prefix}`;
    },
  });
}
console.log(`positional selection of ${samples} samples; load ${loadAverage(1)}`);
console.log('| backend | records | plan s | of which footers s | positions drawn | row groups decoded | parquet bytes read | peak RSS MiB |');
console.log('|---|---|---|---|---|---|---|---|');
try {
  for (const backend of backends) {
    for (const size of sizes) {
      const dir = path.join(ROOT, `parquet-${size}`);
      if (!existsSync(dir)) throw new Error(`${dir} is missing: run bench/planning.ts --sizes ${values.sizes} first`);
      const store = openStore(backend.uri(dir), backend.s3);
      const r = await plan(store, samples);
      console.log(
        `| ${backend.name} | ${size} | ${(r.ms / 1000).toFixed(2)} | ${(r.footersMs / 1000).toFixed(2)} | ${r.drawn} | ${r.groups} | ${(r.bytes / 2 ** 20).toFixed(1)} MiB | ${peakRssMiB()} |`,
      );
    }
  }
} finally {
  for (const b of backends) await b.stop?.();
}
