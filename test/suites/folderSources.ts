/**
 * The generic folder sources, imagefolder and llava, on one backend (local disk in test/unit, S3 in
 * test/integration), over the layouts make_hub_fixtures.py writes: samples in order with their
 * texts, image bytes read back through each locator,
 * the layout detected and described, and bad rows reported one by one with the rest read.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sourceSchema, type SourceConfig } from '../../config/sourceConfig.js';
import { openStore } from '../../storage/openStore.js';
import { openSource } from '../../sources/source.js';
import { SourceError } from '../../sources/contract.js';
import { collect, problemsOf, samplesOf, type Backend } from '../fixtures/backends.js';
import { writeFolderLayout, type FolderFixture } from '../fixtures/folderSources.js';

export function folderSourceTests(backend: Backend): void {
  describe(`folder sources on ${backend.name}`, () => {
    before(() => backend.setUp());
    after(() => backend.tearDown());

    async function imagesReadBack(config: SourceConfig, fixture: FolderFixture): Promise<void> {
      const reader = openSource(config, 0, backend.s3);
      for (const sample of samplesOf(await collect(config, backend.s3))) {
        const { file } = reader.origin(sample.image.locator);
        assert.ok((await reader.readImage(sample.image)).equals(fixture.images.get(file)!), `image of ${sample.sourceId}`);
      }
    }

    it('imagefolder reads ImageFolder metadata (JSONL with a caption in split folders, CSV with question and answer)', async () => {
      const uri = backend.freshRoot();
      const fixture = await writeFolderLayout(openStore(uri, backend.s3), 'imagefolder-splits');
      const config = sourceSchema.parse({ type: 'imagefolder', uri });
      const items = await collect(config, backend.s3);
      assert.deepEqual(problemsOf(items), []);
      assert.deepEqual(
        samplesOf(items).map((s) => [s.sourceId, s.originalInstruction, s.caption]),
        [
          ['test/metadata.jsonl#0:0.jpg', undefined, 'test: red squares on blue'],
          ['test/metadata.jsonl#1:1.jpg', undefined, 'test: a green circle, a yellow bar'],
          ['train/metadata.jsonl#0:images/0.jpg', undefined, 'train: red squares on blue'],
          ['train/metadata.jsonl#1:images/1.jpg', undefined, 'train: a green circle, a yellow bar'],
          ['train/metadata.jsonl#2:images/2.jpg', undefined, 'train: overlapping shapes'],
        ],
      );
      await imagesReadBack(config, fixture);
      assert.match(await openSource(config, 0, backend.s3).describe(), /^layout metadata \(detected\): test\/metadata\.jsonl, train\/metadata\.jsonl; columns detected/);
      const train = sourceSchema.parse({ type: 'imagefolder', uri, splits: ['train'] });
      assert.equal(samplesOf(await collect(train, backend.s3)).length, 3, 'splits keeps the train folder only');

      const csvRoot = backend.freshRoot();
      const csvFixture = await writeFolderLayout(openStore(csvRoot, backend.s3), 'imagefolder-csv');
      const csv = sourceSchema.parse({ type: 'imagefolder', uri: csvRoot, columns: { question: 'question', answer: 'answer' } });
      assert.deepEqual(
        samplesOf(await collect(csv, backend.s3)).map((s) => [s.sourceId, s.originalInstruction, s.originalAnswer]),
        [0, 1, 2].map((i) => [`metadata.csv#${i}:${i}.png`, `What colour is shape ${i}, and where is it?`, `Colour ${i}, near the centre.`]),
      );
      await imagesReadBack(csv, csvFixture);
    });

    it('imagefolder without metadata reads every image file; an empty root names the layouts it expected', async () => {
      const uri = backend.freshRoot();
      const fixture = await writeFolderLayout(openStore(uri, backend.s3), 'imagefolder-plain');
      const config = sourceSchema.parse({ type: 'imagefolder', uri });
      const samples = samplesOf(await collect(config, backend.s3));
      assert.deepEqual(
        samples.map((s) => s.sourceId),
        ['photos/0.jpg', 'photos/1.jpg', 'photos/2.jpg'],
      );
      await imagesReadBack(config, fixture);
      assert.equal(await openSource(config, 0, backend.s3).describe(), 'layout images (detected): 3 image files');
      const empty = sourceSchema.parse({ type: 'imagefolder', uri: backend.freshRoot() });
      await assert.rejects(collect(empty, backend.s3), (err: unknown) => err instanceof SourceError && /no ImageFolder images found .*ImageFolder layout/.test(err.message));
    });

    it('imagefolder reports a row leaving the root, naming a directory or a missing file, each alone', async () => {
      const uri = backend.freshRoot();
      const store = openStore(uri, backend.s3);
      await writeFolderLayout(store, 'imagefolder-plain');
      await store.put('photos/x.jpg/inside.txt', 'a directory named like an image');
      const rows = ['0.jpg', '../../etc/passwd', 'x.jpg', 'gone.jpg', '1.jpg'].map((file_name) => JSON.stringify({ file_name }));
      await store.put('photos/metadata.jsonl', rows.join('\n'));
      const items = await collect(sourceSchema.parse({ type: 'imagefolder', uri }), backend.s3);
      assert.deepEqual(
        items.map((i) => ('problem' in i ? `${i.kind === 'damaged' ? i.code : i.filter} ${i.sourceId}` : `sample ${i.sourceId}`)),
        [
          'sample photos/metadata.jsonl#0:0.jpg',
          'outside-root photos/metadata.jsonl#1:../../etc/passwd',
          'not-a-file photos/metadata.jsonl#2:x.jpg',
          'missing-file photos/metadata.jsonl#3:gone.jpg',
          'sample photos/metadata.jsonl#4:1.jpg',
        ],
      );
    });

    it('llava reads JSON arrays and JSON lines of conversations: first human turn without <image>, first gpt turn', async () => {
      const uri = backend.freshRoot();
      const fixture = await writeFolderLayout(openStore(uri, backend.s3), 'llava-folder');
      const config = sourceSchema.parse({ type: 'llava', uri, imageDir: 'images' });
      const items = await collect(config, backend.s3);
      assert.deepEqual(
        samplesOf(items).map((s) => [s.sourceId, s.originalInstruction, s.originalAnswer]),
        [
          ['data.json#0:a0', 'What makes picture 0 visually interesting?', 'Picture 0 has bold shapes.'],
          ['data.json#1:a1', 'What makes picture 1 visually interesting?', 'Picture 1 has bold shapes.'],
          ['more.jsonl#0:b2', 'What makes picture 2 visually interesting?', 'Picture 2 has bold shapes.'],
        ],
      );
      assert.deepEqual(
        problemsOf(items).map((p) => p.sourceId),
        ['more.jsonl#1:t0'],
        'the text-only record is filtered',
      );
      await imagesReadBack(config, fixture);
      assert.equal(await openSource(config, 0, backend.s3).describe(), "files data.json, more.jsonl (LLaVA conversations), images under 'images'");
    });
  });
}
