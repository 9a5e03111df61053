/**
 * The imagefolder source reads what Hugging Face `datasets` reads as an ImageFolder (issue 29): the
 * ImageFolder layouts make_hub_fixtures.py writes (split folders with metadata.jsonl, metadata.csv,
 * metadata.parquet, a plain folder of images), loaded by `load_dataset("imagefolder", data_dir=...)`
 * under the test profile's datasets releases (test/readers/imagefolder_load.py). Every record the
 * library yields is a sample of ours, with the same image file and the same caption, and no more.
 * datasets 2.16.0 does not read metadata.parquet (its captions come back empty), so that layout is
 * compared under the later releases only.
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
import { readItems } from '../fixtures/backends.js';
import { HUB_FIXTURES } from '../fixtures/folderSources.js';
import { runReader } from '../harness/trainerReaders.js';

const dir = await mkdtemp(path.join(tmpdir(), 'mmif-imagefolder-datasets-'));
after(() => rm(dir, { recursive: true, force: true }));

type Loaded = Record<string, Record<string, Array<{ file: string; text?: string }>>>;

const LAYOUTS = ['imagefolder-splits', 'imagefolder-csv', 'imagefolder-parquet', 'imagefolder-plain'];

for (const release of ['2.16.0', '3.6.0', '4.0.0']) {
  test(`datasets ${release}: every ImageFolder record load_dataset yields is one of our samples, same file and caption`, async () => {
    const roots = LAYOUTS.filter((l) => release !== '2.16.0' || l !== 'imagefolder-parquet').map((l) => path.join(HUB_FIXTURES, l));
    const loaded = await runReader<Loaded>(`${TOOLS_DIR}datasets-${release}/bin/python`, 'imagefolder_load.py', roots, {
      HF_CACHE_DIR: path.join(dir, `cache-${release}`),
      HF_DATASETS_OFFLINE: '1',
    });
    for (const root of roots) {
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
