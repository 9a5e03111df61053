import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { LocalStore } from '../../storage/localStore.js';
import { ZipArchive, ZipArchiveError, ZipMemberError } from '../../sources/readers/zipArchive.js';
import { ArchiveFolder } from '../../sources/readers/archiveFolder.js';

/** Archives written by Python's zipfile (test/fixtures/hub/make_hub_fixtures.py). */
const HUB = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'hub', 'data');

async function open(dir: string, key: string): Promise<ZipArchive> {
  const store = new LocalStore(path.join(HUB, dir));
  for await (const object of store.list(key)) if (object.key === key) return ZipArchive.open(store, key, object.size);
  throw new Error(`no ${key}`);
}

describe('zip archives read in place', () => {
  it('reads stored and deflated members, one ranged read each after the central directory', async () => {
    const archive = await open('geo170k-hub', 'images.zip');
    assert.deepEqual([...archive.members()].sort(), [
      'images/geo3k/train/1/img_diagram.png',
      'images/geoqa_plus/1000.png',
      'images/geoqa_plus/1001.png',
      'images/geoqa_plus/1002.png',
    ]);
    const afterDirectory = archive.reads;
    // 1000 is deflated, 1001 stored (the script alternates).
    for (const member of ['images/geoqa_plus/1000.png', 'images/geoqa_plus/1001.png']) {
      const bytes = await archive.read(member);
      const meta = await sharp(bytes).metadata();
      assert.deepEqual([meta.format, meta.width, meta.height], ['png', 150, 120]);
    }
    assert.equal(archive.reads - afterDirectory, 2);
  });

  it('reads a zip64 archive (zip64 end record, locator and extra fields)', async () => {
    const archive = await open('allava-hub', 'allava_laion/image_chunks/images_1.zip');
    const members = [...archive.members()];
    assert.deepEqual(members, ['laion_images_1/100277307.jpeg', 'laion_images_1/100277308.jpeg']);
    for (const member of members) assert.equal((await sharp(await archive.read(member)).metadata()).format, 'jpeg');
  });

  it('names the archive and member of an encrypted or corrupt member, and still reads the others', async () => {
    const archive = await open('zips-bad', 'images.zip');
    await assert.rejects(
      archive.read('images/encrypted.png'),
      (err: unknown) => err instanceof ZipMemberError && err.code === 'encrypted' && /images\.zip member 'images\/encrypted\.png'/.test(err.message),
    );
    await assert.rejects(
      archive.read('images/corrupt.png'),
      (err: unknown) => err instanceof ZipMemberError && err.code === 'corrupt' && /images\.zip member 'images\/corrupt\.png'/.test(err.message),
    );
    assert.equal((await sharp(await archive.read('images/good.png')).metadata()).format, 'png');
  });

  describe('a file that is not a zip', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mmif-zip-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    it('is refused naming the archive', async () => {
      writeFileSync(path.join(dir, 'broken.zip'), Buffer.alloc(4096, 7));
      await assert.rejects(ZipArchive.open(new LocalStore(dir), 'broken.zip', 4096), (err: unknown) => err instanceof ZipArchiveError && /broken\.zip/.test(err.message));
    });
    it('is set aside by the folder and named, the other archives still read', async () => {
      copyFileSync(path.join(HUB, 'geo170k-hub', 'images.zip'), path.join(dir, 'images.zip'));
      writeFileSync(path.join(dir, 'other.zip'), Buffer.alloc(4096, 7));
      const folder = await ArchiveFolder.open(new LocalStore(dir));
      assert.equal((await folder.find('images/geoqa_plus/1000.png'))?.archive.key, 'images.zip');
      assert.equal(await folder.find('images/geoqa_plus/missing.png'), undefined);
      assert.match((await folder.unreadable('images/geoqa_plus/missing.png')).join('\n'), /other\.zip is not a readable zip archive/);
    });
    it('cut short, is refused naming the archive', async () => {
      copyFileSync(path.join(HUB, 'geo170k-hub', 'images.zip'), path.join(dir, 'cut.zip'));
      writeFileSync(path.join(dir, 'cut.zip'), Buffer.alloc(0), { flag: 'r+' });
      await assert.rejects(ZipArchive.open(new LocalStore(dir), 'cut.zip', 1_000_000), (err: unknown) => err instanceof ZipArchiveError && /cut\.zip/.test(err.message));
    });
  });
});

describe('paths looked up in the zips under a root', () => {
  it('finds a path under the archive folder or its name (Geo170K images.zip holding images/...)', async () => {
    const folder = await ArchiveFolder.open(new LocalStore(path.join(HUB, 'geo170k-hub')));
    const found = await folder.find('images/geoqa_plus/1002.png');
    assert.deepEqual([found?.archive.key, found?.member], ['images.zip', 'images/geoqa_plus/1002.png']);
    assert.equal(await folder.find('images/geoqa_plus/9999.png'), undefined);
  });

  it('finds a path by file name in the archives under its top folder (ALLaVA chunks unpacked with unzip -j)', async () => {
    const folder = await ArchiveFolder.open(new LocalStore(path.join(HUB, 'allava-hub')));
    assert.equal(folder.size, 2);
    const found = await folder.find('allava_laion/images/100277307.jpeg');
    assert.deepEqual([found?.archive.key, found?.member], ['allava_laion/image_chunks/images_1.zip', 'laion_images_1/100277307.jpeg']);
    assert.equal(await folder.find('allava_vflan/images/100277307.jpeg'), undefined, 'an archive under another top folder does not stand for it');
  });
});
