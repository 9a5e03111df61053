/**
 * Symbolic links in local datasets. Layouts: a
 * CC3M `flat` folder (images at the root with `.txt` captions) and a Hugging Face cache snapshot
 * (`<repo>/snapshots/<rev>/00000/000000000.jpg -> ../../../blobs/<sha>`, as huggingface_hub writes it).
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { imageSchema } from '../../config/imageConfig.js';
import { sourceSchema } from '../../config/sourceConfig.js';
import { normalizeImage } from '../../image/normalize.js';
import { StoreError } from '../../storage/objectStore.js';
import { openSource } from '../../sources/source.js';
import { type SourceItem } from '../../sources/contract.js';
import { readItems } from '../fixtures/backends.js';
import { sceneJpeg } from '../fixtures/images.js';

const BUILD_IMAGE = imageSchema.parse({});

async function readAll(uri: string, layout: 'flat' | 'files') {
  const reader = openSource(sourceSchema.parse({ type: 'cc3m', uri, layout }), 0, {});
  const items = await readItems(reader);
  return { reader, samples: items.filter((i) => !('problem' in i)) as Extract<SourceItem, { sampleId: string }>[] };
}

describe('symbolic links in a local dataset', () => {
  it('follows a link inside the root and refuses, with the reason, one leading outside it', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'links-'));
    const root = path.join(dir, 'cc3m');
    await mkdir(path.join(root, 'store'), { recursive: true });
    await writeFile(path.join(root, 'store', 'real.jpg'), await sceneJpeg(1));
    await symlink('store/real.jpg', path.join(root, 'a.jpg'));
    await writeFile(path.join(root, 'a.txt'), 'a linked photo');
    await writeFile(path.join(dir, 'secret.jpg'), await sceneJpeg(2));
    await symlink('../secret.jpg', path.join(root, 'b.jpg'));
    await writeFile(path.join(root, 'b.txt'), 'a link out of the dataset');

    const { reader, samples } = await readAll(root, 'flat');
    assert.deepEqual(
      samples.map((s) => s.image.locator.path),
      ['a.jpg', 'b.jpg'],
      'both links are listed, neither silently skipped',
    );
    const inside = await normalizeImage(await reader.readImage(samples[0]!.image), BUILD_IMAGE);
    assert.ok(inside.ok);
    const outside = await reader.readImage(samples[1]!.image).catch((e: unknown) => e);
    assert.ok(outside instanceof StoreError && outside.code === 'escapes-root', String(outside));
    assert.match(outside.message, /'b\.jpg' in .* is a symbolic link to .*secret\.jpg, outside the dataset root; not read/);
  });

  it('reads a Hugging Face cache snapshot whose files link into the repository blobs/', async () => {
    const repo = await mkdtemp(path.join(tmpdir(), 'datasets--org--cc3m-'));
    const snapshot = path.join(repo, 'snapshots', 'a1b2c3');
    await mkdir(path.join(repo, 'blobs'), { recursive: true });
    await mkdir(path.join(snapshot, '00000'), { recursive: true });
    await writeFile(path.join(repo, 'blobs', 'e3b0c442'), await sceneJpeg(3));
    await writeFile(path.join(repo, 'blobs', 'f00d'), 'a caption from the cache');
    await symlink('../../../blobs/e3b0c442', path.join(snapshot, '00000', '000000000.jpg'));
    await symlink('../../../blobs/f00d', path.join(snapshot, '00000', '000000000.txt'));

    const { reader, samples } = await readAll(snapshot, 'files');
    assert.deepEqual(
      samples.map((s) => [s.image.locator.path, s.caption]),
      [['00000/000000000.jpg', 'a caption from the cache']],
    );
    assert.ok((await normalizeImage(await reader.readImage(samples[0]!.image), BUILD_IMAGE)).ok);
  });
});
