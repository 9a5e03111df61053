/**
 * The llava source reads what Hugging Face `datasets` reads from LLaVA-style files (issue 29): the
 * JSON array and JSON lines make_hub_fixtures.py writes, loaded by `load_dataset("json", data_files=...)`
 * under the test profile's datasets releases (test/readers/llava_json_load.py). Every record with an
 * image the library yields is a sample of ours with the same id, image path and question (the first
 * human turn without `<image>`), the text-only one is filtered, and there are no others.
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

const dir = await mkdtemp(path.join(tmpdir(), 'mmif-llava-datasets-'));
after(() => rm(dir, { recursive: true, force: true }));

type Loaded = Record<string, Array<{ id: string; image: string | null; human: string }>>;

const LAYOUTS: Record<string, string[]> = { 'llava-folder': ['data.json', 'more.jsonl'], 'llava-zip': ['data.jsonl'] };

for (const release of ['2.16.0', '3.6.0', '4.0.0']) {
  test(`datasets ${release}: every LLaVA record load_dataset("json") yields is one of our samples, or the filtered text-only one`, async () => {
    const files = Object.entries(LAYOUTS).flatMap(([layout, names]) => names.map((n) => path.join(HUB_FIXTURES, layout, n)));
    const loaded = await runReader<Loaded>(`${TOOLS_DIR}datasets-${release}/bin/python`, 'llava_json_load.py', files, { HF_CACHE_DIR: path.join(dir, `cache-${release}`) });
    for (const [layout, names] of Object.entries(LAYOUTS)) {
      const root = path.join(HUB_FIXTURES, layout);
      const theirs = names.flatMap((name) => loaded[path.join(root, name)]!.map((r, i) => ({ ...r, sourceId: `${name}#${i}:${r.id}` })));
      const items = await readItems(openSource(sourceSchema.parse({ type: 'llava', uri: root, imageDir: 'images' }), 0, {}));
      const ours = new Map((items.filter((i) => !isProblem(i)) as SourceSample[]).map((s) => [s.sourceId, s]));
      const filtered = items.filter(isProblem).map((p) => p.sourceId);
      for (const record of theirs) {
        if (record.image === null) {
          assert.ok(filtered.includes(record.sourceId), `${record.sourceId}: a text-only record is filtered`);
          continue;
        }
        const sample = ours.get(record.sourceId);
        assert.ok(sample, `${record.sourceId}: a sample of ours`);
        assert.equal(sample.image.locator.path, `images/${record.image}`, `${record.sourceId}: the same image`);
        assert.equal(sample.originalInstruction, record.human.replace('<image>', '').trim(), `${record.sourceId}: the same question`);
      }
      assert.equal(items.length, theirs.length, `${layout}: no record the library does not yield`);
    }
  });
}
