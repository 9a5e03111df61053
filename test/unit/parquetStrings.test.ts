import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { TOOLS_DIR } from '../../local/tools.js';
import { ParquetStringsError, readFooter, readStrings } from '../../sources/parquetStrings.js';

// pyarrow writes one file per variant; its own reading of the columns is the expected value.
const WRITE_VARIANTS = String.raw`
import json, sys, pyarrow as pa, pyarrow.parquet as pq
out = sys.argv[1]
n = 1000
keys = [f"{i:09d}" for i in range(n)]
status = ["success" if i % 9 else ("failed_to_download" if i % 2 else "failed_to_resize") for i in range(n)]
caption = [None if i % 13 == 0 else f"caption {i} é 日本 𝔘 " + "x" * (i % 50) for i in range(n)]
empty = ["" if i % 3 else None for i in range(n)]
table = pa.table({"key": keys, "status": status, "caption": caption, "empty": empty, "width": list(range(n))})
required = pa.table({"key": pa.array(keys, pa.string())}, schema=pa.schema([pa.field("key", pa.string(), nullable=False)]))
variants = {
  "dictionary-snappy": dict(),
  "plain-snappy": dict(use_dictionary=False),
  "dictionary-uncompressed": dict(compression="NONE"),
  "plain-uncompressed": dict(use_dictionary=False, compression="NONE"),
  "gzip": dict(compression="GZIP"),
  "brotli": dict(compression="BROTLI"),
  "page-v2": dict(data_page_version="2.0"),
  "page-v2-plain-uncompressed": dict(data_page_version="2.0", use_dictionary=False, compression="NONE"),
  "small-pages-and-groups": dict(data_page_size=512, row_group_size=300),
  "dictionary-falls-back-to-plain": dict(dictionary_pagesize_limit=2000, data_page_size=1000),
}
for name, options in variants.items():
  pq.write_table(table, f"{out}/{name}.parquet", **options)
pq.write_table(required, f"{out}/required.parquet")
expected = {c: table.column(c).to_pylist() for c in ["key", "status", "caption", "empty"]}
json.dump(expected, open(f"{out}/expected.json", "w"))
`;

function writeVariants(): { dir: string; expected: Record<string, Array<string | null>> } {
  const dir = mkdtempSync(path.join(tmpdir(), 'mmif-pqs-'));
  execFileSync(`${TOOLS_DIR}venv/bin/python`, ['-c', WRITE_VARIANTS, dir]);
  return { dir, expected: JSON.parse(readFileSync(path.join(dir, 'expected.json'), 'utf8')) };
}

function readColumn(bytes: Buffer, column: string): Array<string | null> {
  const footer = readFooter(bytes);
  return footer.rowGroups.flatMap((_, group) => readStrings(bytes, footer, group, column));
}

test('reads the string columns of pyarrow files as pyarrow does: dictionary and plain, every codec, pages v1 and v2, nulls', () => {
  const { dir, expected } = writeVariants();
  try {
    const files = readdirSync(dir).filter((f) => f.endsWith('.parquet') && f !== 'required.parquet');
    assert.equal(files.length, 10);
    for (const file of files) {
      const bytes = readFileSync(path.join(dir, file));
      const footer = readFooter(bytes);
      assert.equal(footer.rowCount, 1000, file);
      for (const column of ['key', 'status', 'caption', 'empty']) assert.deepEqual(readColumn(bytes, column), expected[column], `${file} ${column}`);
      if (file === 'small-pages-and-groups.parquet') assert.equal(footer.rowGroups.length, 4, 'row_group_size 300 over 1000 rows');
      assert.throws(() => readStrings(bytes, footer, 0, 'width'), /column 'width' is not BYTE_ARRAY/);
      assert.throws(() => readStrings(bytes, footer, 0, 'url'), /no column 'url'/);
    }
    assert.deepEqual(readColumn(readFileSync(path.join(dir, 'required.parquet')), 'key'), expected.key, 'a required (non-null) column has no definition levels');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('damage is a ParquetStringsError naming what broke, never a crash or a wrong number of values', () => {
  const { dir } = writeVariants();
  try {
    const bytes = readFileSync(path.join(dir, 'dictionary-snappy.parquet'));
    assert.throws(() => readFooter(bytes.subarray(0, bytes.length - 1)), (err: unknown) => err instanceof ParquetStringsError && /magic/.test(err.message));
    const cut = Buffer.concat([bytes.subarray(0, 4), bytes.subarray(bytes.length - 8)]);
    assert.throws(() => readFooter(cut), (err: unknown) => err instanceof ParquetStringsError && /footer length/.test(err.message));
    // Flip bytes across the caption chunk (headers, levels, dictionary, indices): a flipped character
    // inside a string cannot be told (Parquet pages carry no checksum here), anything else must be
    // a ParquetStringsError or the right number of values.
    const footer = readFooter(bytes);
    const expected = readStrings(bytes, footer, 0, 'caption');
    const chunk = footer.rowGroups[0]!.chunks.get('caption')!;
    let errors = 0;
    for (let at = chunk.start; at < chunk.end; at += 3) {
      const broken = Buffer.from(bytes);
      broken[at] = broken[at]! ^ 0x5a;
      try {
        const values = readStrings(broken, footer, 0, 'caption');
        if (values.length !== expected.length) assert.fail(`byte ${at}: ${values.length} values instead of ${expected.length}`);
      } catch (err) {
        assert.ok(err instanceof ParquetStringsError, `byte ${at}: ${String(err)}`);
        errors++;
      }
    }
    assert.ok(errors > 0, 'some damage is detected');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('any flipped byte or cut anywhere in the file gives a ParquetStringsError or values, never another error or a hang', { timeout: 120_000 }, () => {
  const { dir } = writeVariants();
  try {
    for (const variant of ['dictionary-snappy', 'plain-uncompressed', 'page-v2']) {
      const bytes = readFileSync(path.join(dir, `${variant}.parquet`));
      const readAll = (file: Buffer) => {
        const footer = readFooter(file);
        for (let group = 0; group < footer.rowGroups.length; group++) for (const column of ['key', 'status', 'caption']) readStrings(file, footer, group, column);
      };
      for (let at = 0; at < bytes.length; at += 13) {
        for (const broken of [Buffer.from(bytes).fill(bytes[at]! ^ 0xff, at, at + 1), Buffer.concat([bytes.subarray(0, at), bytes.subarray(bytes.length - 8)])]) {
          try {
            readAll(broken);
          } catch (err) {
            assert.ok(err instanceof ParquetStringsError, `${variant}, byte ${at}: ${String(err)}`);
          }
        }
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
