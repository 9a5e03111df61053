/**
 * The tar reader (sources/readers/tar.ts) against archives GNU tar writes, in each of its formats; the reader's
 * own cases (chunk boundaries, truncation, long names) are in test/unit/tar.test.ts.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { tarEntries, type TarEntry } from '../../sources/readers/tar.js';

const LONG_PATH = `${'deep/'.repeat(25)}0123456789.jpg`; // 139 bytes: too long for the 100-byte name field

async function readAll(tar: Buffer): Promise<{ entries: TarEntry[]; error?: unknown }> {
  const entries: TarEntry[] = [];
  try {
    for await (const e of tarEntries(Readable.from([tar]), 'shard.tar')) entries.push(e);
    return { entries };
  } catch (error) {
    return { entries, error };
  }
}

// GNU tar is part of every Debian base image CI runs on: a missing binary fails the test, not skips it.
test('tarEntries agrees with GNU tar on ustar, gnu and pax archives', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'mmif-tar-'));
  try {
    const names = ['a.txt', LONG_PATH, 'b.bin'];
    for (const [i, name] of names.entries()) {
      mkdirSync(path.dirname(path.join(dir, 'in', name)), { recursive: true });
      writeFileSync(path.join(dir, 'in', name), Buffer.alloc(300 * (i + 1), 65 + i));
    }
    for (const format of ['ustar', 'gnu', 'pax']) {
      const out = path.join(dir, `${format}.tar`);
      execFileSync('tar', [`--format=${format}`, '-cf', out, '-C', path.join(dir, 'in'), ...names]);
      const tar = readFileSync(out);
      const { entries, error } = await readAll(tar);
      assert.equal(error, undefined, format);
      assert.deepEqual(
        entries.map((e) => e.path),
        names,
        format,
      );
      for (const e of entries) {
        assert.deepEqual(tar.subarray(e.offset, e.offset + e.size), readFileSync(path.join(dir, 'in', e.path)), `${format} ${e.path}`);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
