// Two folders of one source type hold the same source ids (each img2dataset run starts at key
// 000000000): their samples must still get distinct ids, or they would share stage states, dedupe
// claims and records. The first folder of a type keeps the ids it always had.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { sourceSchema } from '../../config/sourceConfig.js';
import { sampleIdFor } from '../../domain/hashing.js';
import type { SourceSample } from '../../domain/sample.js';
import { LocalStore } from '../../storage/localStore.js';
import { isProblem, openSources } from '../../sources/source.js';
import { readItems } from '../fixtures/backends.js';
import { writeCc3m } from '../fixtures/cc3m.js';

const dir = await mkdtemp(path.join(tmpdir(), 'mmif-source-ids-'));
after(() => rm(dir, { recursive: true, force: true }));

async function samples(reader: ReturnType<typeof openSources>[number]): Promise<SourceSample[]> {
  return (await readItems(reader)).filter((item): item is SourceSample => !isProblem(item));
}

test('a second folder of the same type gets sample ids of its own; the first keeps its ids', async () => {
  for (const name of ['a', 'b']) await writeCc3m(new LocalStore(path.join(dir, name)), 'files', { perShard: 2, shards: 2 });
  const configs = ['a', 'b'].map((name) => sourceSchema.parse({ type: 'cc3m', uri: path.join(dir, name), layout: 'files' }));
  const [first, second] = await Promise.all(openSources(configs, {}).map(samples));
  assert.deepEqual(
    first!.map((s) => s.sourceId),
    second!.map((s) => s.sourceId),
    'the fixture holds the same keys twice',
  );
  for (const s of first!) assert.equal(s.sampleId, sampleIdFor('cc3m', s.sourceId));
  const ids = [...first!, ...second!].map((s) => s.sampleId);
  assert.equal(new Set(ids).size, ids.length, `colliding ids: ${ids.join(' ')}`);
  for (const s of second!) assert.match(s.sampleId, /^cc3m2-[0-9a-f]{16}$/);
  // Images are still read from each sample's own folder.
  const [firstReader, secondReader] = openSources(configs, {});
  assert.ok((await secondReader!.readImage(second![0]!.image)).length > 0);
  assert.ok((await firstReader!.readImage(first![0]!.image)).length > 0);
});
