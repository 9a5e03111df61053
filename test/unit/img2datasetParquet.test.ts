import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { TOOLS_DIR } from '../../local/tools.js';
import { Img2datasetParquetError, openImg2datasetParquet } from '../../sources/img2datasetParquet.js';
import { img2datasetParquet, sideFileRow } from '../fixtures/cc3m.js';

/** The side file's rows as objects, a value left out where its row has none. */
function rowsOf(bytes: Buffer): Array<Record<string, string>> {
  const { keys, statuses, captions, errors } = openImg2datasetParquet(bytes, 'x.parquet').columns();
  return keys.map((key, i) => ({
    key,
    status: statuses[i]!,
    ...(captions?.[i] != null ? { caption: captions[i]! } : {}),
    ...(errors?.[i] != null ? { errorMessage: errors[i]! } : {}),
  }));
}

test('reads the keys, statuses, captions and errors of a pyarrow-written side file, over several row groups', async () => {
  // 250 rows: img2dataset flushes every 100 rows, so three row groups, dictionary-encoded by pyarrow.
  const records = Array.from({ length: 250 }, (_, i) => ({ key: String(i).padStart(9, '0'), caption: i % 7 === 0 ? undefined : `caption ${i} é`, image: Buffer.alloc(0) }));
  const failed = new Set(['000000003', '000000141', '000000249']);
  const rows = records.map((r) => sideFileRow(r, { failed: failed.has(r.key) }));
  rows[141]!.status = 'failed_to_resize';
  rows[141]!.error_message = 'image too small';
  const bytes = await img2datasetParquet(rows);
  assert.equal(bytes.subarray(0, 4).toString(), 'PAR1');
  const read = rowsOf(bytes);
  assert.equal(read.length, 250);
  assert.deepEqual(read[0], { key: '000000000', status: 'success' }, 'a null caption is left out');
  assert.deepEqual(read[1], { key: '000000001', status: 'success', caption: 'caption 1 é' });
  assert.deepEqual(read[3], { key: '000000003', status: 'failed_to_download', caption: 'caption 3 é', errorMessage: 'HTTP Error 404' });
  assert.deepEqual(read[141], { key: '000000141', status: 'failed_to_resize', caption: 'caption 141 é', errorMessage: 'image too small' });
  assert.deepEqual(read.map((r) => r.key), records.map((r) => r.key));
  assert.equal(openImg2datasetParquet(bytes, 'x.parquet').hasCaptions, true);
});

test('refuses a file that is not Parquet, or not an img2dataset side file, naming it', async () => {
  assert.throws(() => openImg2datasetParquet(Buffer.from('PAR1 not really'), '00003.parquet'), (err: unknown) => {
    assert.ok(err instanceof Img2datasetParquetError);
    assert.match(err.message, /^00003\.parquet is not a readable Parquet file/);
    return true;
  });
  // A Parquet file without the status column, written by pyarrow directly.
  const dir = mkdtempSync(path.join(tmpdir(), 'mmif-i2d-'));
  const out = path.join(dir, 'other.parquet');
  execFileSync(`${TOOLS_DIR}venv/bin/python`, ['-c', `import pyarrow as pa, pyarrow.parquet as pq; pq.write_table(pa.table({"key": ["a"], "caption": ["c"]}), ${JSON.stringify(out)})`]);
  const noStatus = readFileSync(out);
  rmSync(dir, { recursive: true, force: true });
  assert.throws(() => openImg2datasetParquet(noStatus, 'other.parquet'), /other\.parquet has no 'status' column/);
});
