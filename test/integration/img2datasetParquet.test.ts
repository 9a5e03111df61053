import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { TOOLS_DIR } from '../../local/tools.js';
import { Img2datasetParquetError, openImg2datasetParquet, type Img2datasetColumns } from '../../sources/readers/img2datasetParquet.js';
import { img2datasetParquet, sideFileRow } from '../fixtures/cc3m.js';

/** The side file's rows as objects, a value left out where its row has none. */
async function rowsOf(bytes: Buffer): Promise<Array<Record<string, string>>> {
  const { keys, statuses, captions, errors } = await openImg2datasetParquet(bytes, 'x.parquet').columns();
  return keys.map((key, i) => ({
    key,
    status: statuses[i]!,
    ...(captions?.[i] != null ? { caption: captions[i]! } : {}),
    ...(errors?.[i] != null ? { errorMessage: errors[i]! } : {}),
  }));
}

/** 250 rows: img2dataset flushes every 100 rows, so three row groups, dictionary-encoded by pyarrow. */
function sideFileRows() {
  const records = Array.from({ length: 250 }, (_, i) => ({ key: String(i).padStart(9, '0'), caption: i % 7 === 0 ? undefined : `caption ${i} é`, image: Buffer.alloc(0) }));
  const failed = new Set(['000000003', '000000141', '000000249']);
  const rows = records.map((r) => sideFileRow(r, { failed: failed.has(r.key) }));
  rows[141]!.status = 'failed_to_resize';
  rows[141]!.error_message = 'image too small';
  return { records, rows };
}

for (const codec of ['snappy', 'zstd']) {
  test(`reads the keys, statuses, captions and errors of a pyarrow-written ${codec} side file, over several row groups`, async () => {
    const { records, rows } = sideFileRows();
    const bytes = await img2datasetParquet(rows, codec);
    assert.equal(bytes.subarray(0, 4).toString(), 'PAR1');
    const read = await rowsOf(bytes);
    assert.equal(read.length, 250);
    assert.deepEqual(read[0], { key: '000000000', status: 'success' }, 'a null caption is left out');
    assert.deepEqual(read[1], { key: '000000001', status: 'success', caption: 'caption 1 é' });
    assert.deepEqual(read[3], { key: '000000003', status: 'failed_to_download', caption: 'caption 3 é', errorMessage: 'HTTP Error 404' });
    assert.deepEqual(read[141], { key: '000000141', status: 'failed_to_resize', caption: 'caption 141 é', errorMessage: 'image too small' });
    assert.deepEqual(
      read.map((r) => r.key),
      records.map((r) => r.key),
    );
    assert.equal(openImg2datasetParquet(bytes, 'x.parquet').hasCaptions, true);
  });
}

test('refuses a file that is not Parquet, or not an img2dataset side file, naming it', async () => {
  assert.throws(
    () => openImg2datasetParquet(Buffer.from('PAR1 not really'), '00003.parquet'),
    (err: unknown) => {
      assert.ok(err instanceof Img2datasetParquetError);
      assert.match(err.message, /^00003\.parquet is not a readable Parquet file/);
      return true;
    },
  );
  // A Parquet file without the status column, written by pyarrow directly.
  const dir = mkdtempSync(path.join(tmpdir(), 'mmif-i2d-'));
  const out = path.join(dir, 'other.parquet');
  execFileSync(`${TOOLS_DIR}venv/bin/python`, [
    '-c',
    `import pyarrow as pa, pyarrow.parquet as pq; pq.write_table(pa.table({"key": ["a"], "caption": ["c"]}), ${JSON.stringify(out)})`,
  ]);
  const noStatus = readFileSync(out);
  rmSync(dir, { recursive: true, force: true });
  assert.throws(() => openImg2datasetParquet(noStatus, 'other.parquet'), /other\.parquet has no 'status' column/);
});

// pyarrow writes one file per variant; its own reading of the columns is the expected value.
const WRITE_VARIANTS = String.raw`
import json, sys, pyarrow as pa, pyarrow.parquet as pq
out = sys.argv[1]
n = 1000
keys = [f"{i:09d}" for i in range(n)]
status = ["success" if i % 9 else ("failed_to_download" if i % 2 else "failed_to_resize") for i in range(n)]
caption = [None if i % 13 == 0 else f"caption {i} é 日本 𝔘 " + "x" * (i % 50) for i in range(n)]
error_message = ["" if i % 3 else None for i in range(n)]
table = pa.table({"key": keys, "status": status, "caption": caption, "error_message": error_message, "width": list(range(n))})
required = pa.schema([pa.field("key", pa.string(), nullable=False), pa.field("status", pa.string(), nullable=False)])
variants = {
  "dictionary-snappy": dict(),
  "plain-snappy": dict(use_dictionary=False),
  "dictionary-uncompressed": dict(compression="NONE"),
  "plain-uncompressed": dict(use_dictionary=False, compression="NONE"),
  "gzip": dict(compression="GZIP"),
  "brotli": dict(compression="BROTLI"),
  "zstd": dict(compression="ZSTD"),
  "lz4": dict(compression="LZ4"),
  "page-v2": dict(data_page_version="2.0"),
  "page-v2-plain-uncompressed": dict(data_page_version="2.0", use_dictionary=False, compression="NONE"),
  "small-pages-and-groups": dict(data_page_size=512, row_group_size=300),
  "dictionary-falls-back-to-plain": dict(dictionary_pagesize_limit=2000, data_page_size=1000),
}
for name, options in variants.items():
  pq.write_table(table, f"{out}/{name}.parquet", **options)
pq.write_table(pa.table({"key": keys, "status": status}, schema=required), f"{out}/required.parquet")
expected = {c: table.column(c).to_pylist() for c in ["key", "status", "caption", "error_message"]}
json.dump(expected, open(f"{out}/expected.json", "w"))
`;

function writeVariants(): { dir: string; expected: Record<string, Array<string | null>> } {
  const dir = mkdtempSync(path.join(tmpdir(), 'mmif-i2d-variants-'));
  execFileSync(`${TOOLS_DIR}venv/bin/python`, ['-c', WRITE_VARIANTS, dir]);
  return { dir, expected: JSON.parse(readFileSync(path.join(dir, 'expected.json'), 'utf8')) };
}

test('reads the columns of pyarrow files as pyarrow does: dictionary and plain, every codec, pages v1 and v2, nulls, required columns', async () => {
  const { dir, expected } = writeVariants();
  try {
    const files = readdirSync(dir).filter((f) => f.endsWith('.parquet') && f !== 'required.parquet');
    assert.equal(files.length, 12);
    for (const file of files) {
      const read = await openImg2datasetParquet(readFileSync(path.join(dir, file)), file).columns();
      assert.deepEqual(
        { key: read.keys, status: read.statuses, caption: read.captions, error_message: read.errors },
        { key: expected.key, status: expected.status, caption: expected.caption, error_message: expected.error_message },
        file,
      );
    }
    const required = await openImg2datasetParquet(readFileSync(path.join(dir, 'required.parquet')), 'required.parquet').columns();
    assert.deepEqual([required.keys, required.statuses], [expected.key, expected.status], 'required (non-null) columns have no definition levels');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a cut anywhere in a side file, or a flipped byte, gives an Img2datasetParquetError or the rows, never another error', { timeout: 300_000 }, async () => {
  const { dir } = writeVariants();
  try {
    // Flipped bytes only where hyparquet stays bounded: a flip in a v2 page header's value count can
    // make it fill a level array of billions of entries (a page-v2 file ran > 60 s;
    // bench/notes/2026-11-24-library-swaps.md), which no check of ours can interrupt. Cuts (truncated downloads) everywhere.
    const flipped = new Set(['dictionary-snappy', 'zstd']);
    for (const variant of ['dictionary-snappy', 'plain-uncompressed', 'page-v2', 'zstd']) {
      const bytes = readFileSync(path.join(dir, `${variant}.parquet`));
      let failures = 0;
      for (let at = 0; at < bytes.length; at += 29) {
        const cut = Buffer.concat([bytes.subarray(0, at), bytes.subarray(bytes.length - 8)]);
        for (const broken of flipped.has(variant) ? [cut, Buffer.from(bytes).fill(bytes[at]! ^ 0xff, at, at + 1)] : [cut]) {
          try {
            const read: Img2datasetColumns = await openImg2datasetParquet(broken, `${variant}.parquet`).columns();
            // Pages carry no checksum here: a flipped character inside a string cannot be told; the row count can.
            assert.equal(read.keys.length, read.statuses.length, `${variant}, byte ${at}`);
          } catch (err) {
            assert.ok(err instanceof Img2datasetParquetError, `${variant}, byte ${at}: ${String(err)}`);
            assert.match(err.message, new RegExp(`^${variant}\\.parquet (is not a readable Parquet file|is damaged|has no|row \\d+)`));
            failures++;
          }
        }
      }
      assert.ok(failures > 0, `${variant}: some damage is detected`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
