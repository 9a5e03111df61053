/** The suite of test/suites/folderSources.ts on local disk, with what only a local disk can hold; test/integration/folderSources.test.ts runs it on S3. */
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { ParquetSchema, ParquetWriter } from '@dsnp/parquetjs';
import { sourceSchema } from '../../config/sourceConfig.js';
import { collect, localBackend } from '../fixtures/backends.js';
import { sceneJpeg } from '../fixtures/images.js';
import { folderSourceTests } from '../suites/folderSources.js';

folderSourceTests(localBackend());

test('imagefolder names a file whose name is not UTF-8 as a problem of that file, and reads the rest', async () => {
  const root = await mkdtemp(path.join(tmpdir(), 'mmif-imagefolder-'));
  try {
    await mkdir(path.join(root, 'train'));
    await writeFile(path.join(root, 'train', 'a.jpg'), await sceneJpeg(1, 64, 64));
    await writeFile(Buffer.concat([Buffer.from(path.join(root, 'train') + '/'), Buffer.from([0xff, 0xfe]), Buffer.from('.jpg')]), await sceneJpeg(2, 64, 64));
    await writeFile(path.join(root, 'train', 'b.jpg'), await sceneJpeg(3, 64, 64));
    const items = await collect(sourceSchema.parse({ type: 'imagefolder', uri: root }), {});
    const outline = items.map((i) => ('problem' in i ? `${i.kind === 'damaged' ? i.code : i.filter}: ${i.reason}` : `sample ${i.sourceId}`));
    assert.equal(outline.length, 3);
    assert.deepEqual([outline[0], outline[1]], ['sample train/a.jpg', 'sample train/b.jpg']);
    assert.match(outline[2]!, /^unreadable-file: train\/\uFFFD\uFFFD\.jpg: its name is not valid UTF-8/);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test('imagefolder reads metadata.parquet rows like JSONL and CSV ones', async () => {
  const root = await mkdtemp(path.join(tmpdir(), 'mmif-imagefolder-'));
  try {
    for (const i of [0, 1]) await writeFile(path.join(root, `${i}.jpg`), await sceneJpeg(60 + i, 64, 64));
    const writer = await ParquetWriter.openFile(new ParquetSchema({ file_name: { type: 'UTF8' }, text: { type: 'UTF8' } }), path.join(root, 'metadata.parquet'));
    for (const i of [0, 1]) await writer.appendRow({ file_name: `${i}.jpg`, text: `caption ${i}` });
    await writer.close();
    const items = await collect(sourceSchema.parse({ type: 'imagefolder', uri: root }), {});
    assert.deepEqual(
      items.map((i) => ('problem' in i ? i.reason : [i.sourceId, i.caption])),
      [
        ['metadata.parquet#0:0.jpg', 'caption 0'],
        ['metadata.parquet#1:1.jpg', 'caption 1'],
      ],
    );
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
