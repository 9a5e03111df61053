import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { tarEntries, type TarEntry } from '../../sources/readers/tar.js';
import { seekTarMember, type TarOrder } from '../../sources/readers/tarSeek.js';
import { cutInsideMember, packTar, type TarFile } from '../fixtures/cc3m.js';

const recordOf = (path: string) => path.split('.')[0]!;
const keyOf = (i: number) => String(i).padStart(9, '0');

/** img2dataset's members for `count` records, images of 2-60 KB (deterministic), in key order. */
function webdatasetTar(count: number, imageBytes: (i: number) => number = (i) => 2048 + ((i * 7919) % 58000)): { tar: Buffer; keys: string[] } {
  const files: TarFile[] = [];
  const keys: string[] = [];
  for (let i = 0; i < count; i++) {
    const key = keyOf(i);
    keys.push(key);
    files.push(
      { path: `${key}.jpg`, data: Buffer.alloc(imageBytes(i), i % 251) },
      { path: `${key}.txt`, data: `caption ${i}` },
      { path: `${key}.json`, data: JSON.stringify({ key, status: 'success' }) },
    );
  }
  return { tar: packTar(files), keys };
}

async function imageRanges(tar: Buffer): Promise<Map<string, [number, number]>> {
  const ranges = new Map<string, [number, number]>();
  const entries: TarEntry[] = [];
  try {
    for await (const e of tarEntries(Readable.from([tar]), 't.tar')) entries.push(e);
  } catch {
    // a truncated tar: the entries before the damage
  }
  for (const e of entries) if (e.path.endsWith('.jpg')) ranges.set(recordOf(e.path), [e.offset, e.offset + e.size]);
  return ranges;
}

function orderOf(keys: string[]): TarOrder {
  return { ordinals: new Map(keys.map((k, i) => [k, i])), count: keys.length, recordOf };
}

/** Seeks record `key`'s image; reports the bytes and reads it took. */
async function seek(tar: Buffer, order: TarOrder, key: string): Promise<{ range?: [number, number]; bytes: number; reads: number }> {
  let bytes = 0;
  let reads = 0;
  const range = await seekTarMember(
    async (start, end) => {
      reads++;
      bytes += end - start;
      return tar.subarray(start, end);
    },
    tar.length,
    order,
    { ordinal: order.ordinals.get(key)!, isWanted: (path) => path === `${key}.jpg` },
  );
  return { ...(range ? { range } : {}), bytes, reads };
}

describe("seeking a tar member in the side file's record order", () => {
  it("finds each image's exact byte range in a few windows, not by reading the tar", async () => {
    const { tar, keys } = webdatasetTar(1500);
    const expected = await imageRanges(tar);
    assert.ok(tar.length > 40 * 2 ** 20, `a tar of ${tar.length} bytes`);
    let bytes = 0;
    let reads = 0;
    const picked = [0, 1, 2, ...keys.keys()].filter((i) => i < 3 || i % 37 === 0 || i === keys.length - 1);
    for (const i of picked) {
      const found = await seek(tar, orderOf(keys), keys[i]!);
      assert.deepEqual(found.range, expected.get(keys[i]!), `record ${i}`);
      assert.ok(found.reads <= 3, `record ${i}: ${found.reads} windows`);
      bytes += found.bytes;
      reads += found.reads;
    }
    console.log(`# ${picked.length} images of a ${tar.length}-byte tar: ${(reads / picked.length).toFixed(2)} windows, ${Math.round(bytes / picked.length)} bytes read per image`);
    assert.ok(bytes / picked.length < 200 * 1024, `${Math.round(bytes / picked.length)} bytes read per image`);
  });

  it('never returns a wrong range: a tar in another order or damage give the right range or undefined; members larger than a window are found', async () => {
    const { tar, keys } = webdatasetTar(400);
    const expected = await imageRanges(tar);
    // Another order than the tar's: whatever it finds must still be the record asked for.
    const shuffled = [...keys].sort((a, b) => ((Number(a) * 7919) % 401) - ((Number(b) * 7919) % 401));
    let found = 0;
    for (const key of keys) {
      const r = await seek(tar, orderOf(shuffled), key);
      if (r.range) {
        assert.deepEqual(r.range, expected.get(key), key);
        found++;
      }
    }
    assert.ok(found < keys.length, 'some records are not found in the wrong order');

    // Cut inside record 300's image: records before it are found, 300 and later are not.
    const cut = cutInsideMember(tar, `${keyOf(300)}.jpg`);
    assert.deepEqual((await seek(cut, orderOf(keys), keyOf(299))).range, expected.get(keyOf(299)));
    assert.equal((await seek(cut, orderOf(keys), keyOf(300))).range, undefined);
    assert.equal((await seek(cut, orderOf(keys), keyOf(350))).range, undefined);

    // Images of 300-700 KB, larger than a window: windows falling inside one are read again, wider.
    const big = webdatasetTar(40, (i) => 300_000 + ((i * 7919) % 400_000));
    const bigRanges = await imageRanges(big.tar);
    for (const key of big.keys) assert.deepEqual((await seek(big.tar, orderOf(big.keys), key)).range, bigRanges.get(key), key);
  });
});
