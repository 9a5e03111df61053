import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { ArchiveFolder } from '../../sources/readers/archiveFolder.js';
import { namedImages } from '../../sources/readers/namedImages.js';
import { TarArchive } from '../../sources/readers/tarArchive.js';
import { LocalStore } from '../../storage/localStore.js';
import { StoreError } from '../../storage/objectStore.js';
import { packTar } from '../fixtures/cc3m.js';

const dir = mkdtempSync(path.join(tmpdir(), 'mmif-tar-in-place-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const A = Buffer.alloc(700 * 1024, 3); // larger than a header window: its data is jumped over when indexing
const B = Buffer.from('small image bytes');
writeFileSync(
  path.join(dir, 'images.tar'),
  packTar([
    { path: 'images/coco/a.jpg', data: A },
    { path: 'images/coco', data: '', type: '5' },
    { path: 'images/coco/b.jpg', data: B },
  ]),
);

/** The root's LocalStore, counting ranged reads. */
function countingStore(): LocalStore & { ranges: number } {
  const store = Object.assign(new LocalStore(dir), { ranges: 0 });
  const getRange = store.getRange.bind(store);
  store.getRange = (key, start, end) => {
    store.ranges++;
    return getRange(key, start, end);
  };
  return store;
}

describe('uncompressed tars under a root, read in place', () => {
  it('indexes the headers once, then reads a member with one ranged read', async () => {
    const store = countingStore();
    const archive = await TarArchive.open(store, 'images.tar', (await store.get('images.tar'))!.length);
    assert.deepEqual([...archive.members()], ['images/coco/a.jpg', 'images/coco/b.jpg']);
    const indexing = store.ranges;
    assert.deepEqual(await archive.read('images/coco/a.jpg'), A);
    assert.deepEqual(await archive.read('images/coco/b.jpg'), B);
    assert.equal(store.ranges - indexing, 2);
  });

  it('gives a path that is not a file from the tar, naming the archive and member as its origin', async () => {
    const store = countingStore();
    const images = namedImages(store);
    assert.deepEqual(await images.read({ path: 'images/coco/b.jpg' }), B);
    assert.deepEqual(images.origin({ path: 'images/coco/b.jpg' }), { file: 'images.tar', member: 'images/coco/b.jpg' });
    // Under the archive's own name, as for images.zip: `images/coco/a.jpg` is member `coco/a.jpg` of images.tar when it holds that.
    const folder = await ArchiveFolder.open(store);
    assert.deepEqual((await folder.find('images/images/coco/a.jpg'))?.member, 'images/coco/a.jpg');
  });

  it('sets a damaged tar aside, naming it where a path is not found, and reads the others', async () => {
    const other = mkdtempSync(path.join(tmpdir(), 'mmif-tar-damaged-'));
    try {
      const whole = packTar([{ path: 'pics/x.jpg', data: A }]);
      writeFileSync(path.join(other, 'cut.tar'), whole.subarray(0, 4096));
      writeFileSync(path.join(other, 'pics.tar'), packTar([{ path: 'pics/y.jpg', data: B }]));
      const images = namedImages(new LocalStore(other));
      assert.deepEqual(await images.read({ path: 'pics/y.jpg' }), B);
      await assert.rejects(images.read({ path: 'pics/x.jpg' }), (err: unknown) => {
        assert.ok(err instanceof StoreError && err.code === 'not-found', String(err));
        assert.match(err.message, /not searched: tar cut\.tar is truncated/);
        return true;
      });
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('indexes a tar only when a lookup reaches it: the archives before it in key order did not hold the path, and none under another top folder', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'mmif-tar-lazy-'));
    try {
      writeFileSync(path.join(root, 'a.tar'), packTar([{ path: 'pics/1.jpg', data: A }]));
      writeFileSync(path.join(root, 'b.tar'), packTar([{ path: 'pics/2.jpg', data: B }]));
      mkdirSync(path.join(root, 'other'));
      writeFileSync(path.join(root, 'other/c.tar'), packTar([{ path: 'pics/1.jpg', data: B }]));
      mkdirSync(path.join(root, 'pics'));
      writeFileSync(path.join(root, 'pics/d.tar'), packTar([{ path: '3.jpg', data: B }]));
      const read = new Map<string, number>();
      const store = new LocalStore(root);
      const getRange = store.getRange.bind(store);
      store.getRange = (key, start, end) => {
        read.set(key, (read.get(key) ?? 0) + 1);
        return getRange(key, start, end);
      };
      const folder = await ArchiveFolder.open(store);
      assert.equal(folder.size, 4);
      assert.deepEqual(read, new Map(), 'opening the folder lists the root, it reads no archive');
      assert.equal((await folder.find('pics/1.jpg'))?.archive.key, 'a.tar');
      assert.deepEqual([...read.keys()], ['a.tar'], 'found in the first: the others are not indexed');
      assert.equal((await folder.find('pics/2.jpg'))?.archive.key, 'b.tar');
      assert.equal((await folder.find('pics/3.jpg'))?.archive.key, 'pics/d.tar');
      assert.equal(await folder.find('pics/missing.jpg'), undefined);
      assert.deepEqual([...read.keys()].sort(), ['a.tar', 'b.tar', 'pics/d.tar'], 'other/c.tar, under another top folder, never stands for pics/');
      const indexed = new Map(read);
      await folder.find('pics/missing.jpg');
      assert.deepEqual(read, indexed, 'each tar is indexed once');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
