/**
 * The imagefolder source reads what Hugging Face `datasets` reads as an ImageFolder (issue 29): a
 * dataset with split folders whose metadata files share one format and one set of columns (the only
 * kind `datasets` accepts: mixed `.csv`/`.jsonl` or different columns per split are refused by its
 * folder builder), and a plain folder of images, loaded by `load_dataset("imagefolder", data_dir=...)`
 * under the test profile's datasets releases (test/readers/imagefolder_load.py). Every record the
 * library yields is a sample of ours, with the same image file and the same caption, and no more.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sourceSchema } from '../../config/sourceConfig.js';
import { TOOLS_DIR } from '../../local/tools.js';
import { isProblem } from '../../sources/contract.js';
import { openSource } from '../../sources/source.js';
import type { SourceSample } from '../../domain/sample.js';
import { LocalStore } from '../../storage/localStore.js';
import { readItems } from '../fixtures/backends.js';
import { writePlainImages } from '../fixtures/folderSources.js';
import { sceneJpeg } from '../fixtures/images.js';
import { runReader } from '../harness/trainerReaders.js';

const dir = await mkdtemp(path.join(tmpdir(), 'mmif-imagefolder-datasets-'));
after(() => rm(dir, { recursive: true, force: true }));

type Loaded = Record<string, Record<string, Array<{ file: string; text?: string }>>>;

/** train/ and test/, each with metadata.jsonl of {file_name, text}; images in a subfolder and beside it. */
async function writeSplitFolder(root: string): Promise<void> {
  const store = new LocalStore(root);
  const splits = { train: ['images/0.jpg', 'images/1.jpg', 'images/2.png'], test: ['0.jpg', '1.jpg'] };
  for (const [s, [split, files]] of Object.entries(splits).entries()) {
    for (const [i, file] of files.entries()) await store.put(`${split}/${file}`, await sceneJpeg(60 + 10 * s + i, 320, 240));
    await store.put(`${split}/metadata.jsonl`, files.map((file, i) => `${JSON.stringify({ file_name: file, text: `${split} picture ${i}, shapes` })}\n`).join(''));
  }
}

for (const release of ['2.16.0', '4.0.0']) {
  test(`datasets ${release}: every ImageFolder record load_dataset yields is one of our samples, same file and caption`, async () => {
    const [split, plain] = [path.join(dir, `split-${release}`), path.join(dir, `plain-${release}`)];
    await writeSplitFolder(split);
    await writePlainImages(new LocalStore(plain));
    const loaded = await runReader<Loaded>(`${TOOLS_DIR}datasets-${release}/bin/python`, 'imagefolder_load.py', [split, plain], {
      HF_CACHE_DIR: path.join(dir, `cache-${release}`),
      HF_DATASETS_OFFLINE: '1',
    });
    for (const root of [split, plain]) {
      const theirs = Object.entries(loaded[root]!).flatMap(([name, rows]) => rows.map((r) => ({ file: r.file, text: r.text ?? null, split: name })));
      const reader = openSource(sourceSchema.parse({ type: 'imagefolder', uri: root }), 0, {});
      const items = await readItems(reader);
      assert.deepEqual(items.filter(isProblem), [], `${root}: no problems`);
      const ours = (items as SourceSample[]).map((s) => ({ file: reader.origin(s.image.locator).file, text: s.caption ?? null }));
      const sorted = <T extends { file: string }>(rows: T[]) => [...rows].sort((a, b) => (a.file < b.file ? -1 : 1));
      assert.deepEqual(sorted(ours), sorted(theirs.map(({ file, text }) => ({ file, text }))), `${root}: the same records`);
      assert.ok(theirs.length >= 3, `${root}: the library read ${theirs.length} records`);
    }
  });
}
