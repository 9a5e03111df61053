import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { TarError, tarEntries, tarEntriesByRange, type TarEntry, type TarOptions } from '../../sources/readers/tar.js';
import { cutInsideMember, packTar, type TarFile } from '../fixtures/cc3m.js';

/** Feeds a buffer in fixed-size chunks, so headers and data straddle chunk boundaries. */
function streamOf(bytes: Buffer, chunkSize = 4096): Readable {
  return Readable.from(
    (function* () {
      for (let i = 0; i < bytes.length; i += chunkSize) yield bytes.subarray(i, i + chunkSize);
    })(),
  );
}

async function readAll(bytes: Buffer, options?: TarOptions, chunkSize?: number): Promise<{ entries: TarEntry[]; error?: unknown }> {
  const entries: TarEntry[] = [];
  try {
    for await (const e of tarEntries(streamOf(bytes, chunkSize), 'shard.tar', options)) entries.push(e);
    return { entries };
  } catch (error) {
    return { entries, error };
  }
}

function assertTruncated(error: unknown): TarError {
  assert.ok(error instanceof TarError, `expected a TarError, got ${String(error)}`);
  assert.match(error.message, /shard\.tar/);
  assert.match(error.message, /truncated/);
  return error;
}

const LONG_PATH = `${'deep/'.repeat(25)}0123456789.jpg`; // 139 bytes: too long for the 100-byte name field

const files: TarFile[] = [
  { path: '000000000.jpg', data: Buffer.alloc(1000, 7) },
  { path: 'folder', data: '', type: '5' },
  { path: '000000000.txt', data: 'a red boat' },
  { path: 'empty.json', data: '' },
  { path: '000000001.jpg', data: Buffer.alloc(512, 9) },
];

describe('tarEntries', () => {
  it('yields regular files with the offset and size of their data, skipping directories', async () => {
    const tar = packTar(files);
    for (const chunkSize of [7, 512, 65536]) {
      const { entries, error } = await readAll(tar, {}, chunkSize);
      assert.equal(error, undefined);
      assert.deepEqual(
        entries.map((e) => e.path),
        ['000000000.jpg', '000000000.txt', 'empty.json', '000000001.jpg'],
      );
      for (const e of entries) {
        const expected = files.find((f) => f.path === e.path)!.data;
        assert.deepEqual(tar.subarray(e.offset, e.offset + e.size), Buffer.from(expected), e.path);
        assert.equal(e.data, undefined);
      }
    }
  });

  it('hands back the bytes of the members the caller captures', async () => {
    const { entries } = await readAll(packTar(files), { capture: (e) => e.path.endsWith('.txt') });
    assert.deepEqual(
      entries.map((e) => e.data?.toString()),
      [undefined, 'a red boat', undefined, undefined],
    );
  });

  for (const format of ['gnu', 'pax'] as const) {
    it(`reads names longer than 100 bytes from ${format} headers`, async () => {
      const tar = packTar(
        [
          { path: LONG_PATH, data: 'long' },
          { path: 'short.txt', data: 'short' },
        ],
        format,
      );
      const { entries, error } = await readAll(tar);
      assert.equal(error, undefined);
      assert.deepEqual(
        entries.map((e) => [e.path, tar.subarray(e.offset, e.offset + e.size).toString()]),
        [
          [LONG_PATH, 'long'],
          ['short.txt', 'short'],
        ],
      );
    });
  }

  it('streams: the first entry arrives before the rest of the tar is read', async () => {
    const big = Buffer.alloc(1 << 20, 1);
    const tar = packTar([
      { path: 'a.jpg', data: 'small' },
      { path: 'b.jpg', data: big },
      { path: 'c.jpg', data: big },
    ]);
    let pulled = 0;
    const source = Readable.from(
      (function* () {
        for (let i = 0; i < tar.length; i += 65536) {
          pulled += Math.min(65536, tar.length - i);
          yield tar.subarray(i, i + 65536);
        }
      })(),
    );
    for await (const first of tarEntries(source, 'shard.tar')) {
      assert.equal(first.path, 'a.jpg');
      assert.ok(pulled < tar.length / 2, `read ${pulled} of ${tar.length} bytes before the first entry`);
      break;
    }
    assert.ok(source.destroyed, 'leaving early must stop the stream');
  });

  it('yields the complete entries, then throws naming the tar, when cut inside member data', async () => {
    const { entries, error } = await readAll(cutInsideMember(packTar(files), '000000001.jpg'));
    assert.deepEqual(
      entries.map((e) => e.path),
      ['000000000.jpg', '000000000.txt', 'empty.json'],
    );
    assert.equal(assertTruncated(error).member, '000000001.jpg');
  });

  it('throws when cut inside a header', async () => {
    const tar = packTar(files);
    const secondHeader = 512 + 1024; // after the first member's header and its 1000 bytes padded to 1024
    const { entries, error } = await readAll(tar.subarray(0, secondHeader + 100));
    assert.deepEqual(
      entries.map((e) => e.path),
      ['000000000.jpg'],
    );
    assert.equal(assertTruncated(error).member, undefined);
  });

  it('throws when the end-of-archive marker is missing, even on a block boundary', async () => {
    const tar = packTar(files);
    const { entries, error } = await readAll(tar.subarray(0, tar.length - 1024));
    assert.equal(entries.length, 4);
    assertTruncated(error);
    assertTruncated((await readAll(Buffer.alloc(0))).error);
  });

  it('rejects a damaged header by its checksum', async () => {
    const tar = Buffer.from(packTar(files));
    tar[10] = 0x41; // inside the first member's name
    const { entries, error } = await readAll(tar);
    assert.equal(entries.length, 0);
    assert.ok(error instanceof TarError);
    assert.match(error.message, /shard\.tar is damaged: bad header checksum at offset 0/);
  });
});

describe('tarEntriesByRange', () => {
  async function readByRange(tar: Buffer, windowBytes: number, options: TarOptions = {}) {
    const entries: TarEntry[] = [];
    let fetched = 0;
    const readRange = async (start: number, end: number) => {
      fetched += end - start;
      return tar.subarray(start, end);
    };
    try {
      for await (const e of tarEntriesByRange(readRange, tar.length, 'shard.tar', { ...options, windowBytes })) entries.push(e);
      return { entries, fetched };
    } catch (error) {
      return { entries, fetched, error };
    }
  }

  const damaged = {
    'cut inside member data': cutInsideMember(packTar(files), '000000001.jpg'),
    'cut inside a header': packTar(files).subarray(0, 512 + 1024 + 100),
    'no end-of-archive marker': packTar(files).subarray(0, packTar(files).length - 1024),
  };

  for (const windowBytes of [512, 4096, 1 << 20]) {
    it(`yields what the stream reader yields, damage included (window ${windowBytes} bytes)`, async () => {
      const cases: Record<string, Buffer> = {
        whole: packTar(files),
        gnu: packTar([{ path: LONG_PATH, data: 'long' }, ...files], 'gnu'),
        pax: packTar([{ path: LONG_PATH, data: 'x' }], 'pax'),
        ...damaged,
      };
      for (const [name, tar] of Object.entries(cases)) {
        const options = { capture: (e: { path: string }) => e.path.endsWith('.txt') };
        const streamed = await readAll(tar, options);
        const ranged = await readByRange(tar, windowBytes, options);
        assert.deepEqual(ranged.entries, streamed.entries, name);
        assert.equal(String(ranged.error), String(streamed.error), name);
        assert.equal((ranged.error as TarError | undefined)?.member, (streamed.error as TarError | undefined)?.member, name);
      }
    });
  }

  it('reads headers, not the data of members larger than its window', async () => {
    const big = Buffer.alloc(1 << 20, 1);
    const tar = packTar([
      { path: 'a.jpg', data: big },
      { path: 'a.txt', data: 'caption' },
      { path: 'b.jpg', data: big },
      { path: 'b.txt', data: 'caption' },
    ]);
    const { entries, fetched, error } = await readByRange(tar, 4096);
    assert.equal(error, undefined);
    assert.deepEqual(
      entries.map((e) => e.path),
      ['a.jpg', 'a.txt', 'b.jpg', 'b.txt'],
    );
    assert.ok(fetched < 5 * 4096, `fetched ${fetched} of ${tar.length} bytes`);
  });
});
