// Two folders of one source type hold the same source ids (each img2dataset run starts at key
// 000000000): their samples must still get distinct ids, or they would share stage states, dedupe
// claims and records. The first folder of a type keeps the ids it always had. Each is named apart in
// records (config/sourceConfig.ts sourceNames).
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { parseBuildConfig, type BuildConfigInput } from '../../config/buildConfig.js';
import { sourceNames, sourceSchema } from '../../config/sourceConfig.js';
import { sampleIdFor } from '../../domain/hashing.js';
import type { SourceSample } from '../../domain/sample.js';
import { LocalStore } from '../../storage/localStore.js';
import { openSources } from '../../sources/source.js';
import { isProblem } from '../../sources/contract.js';
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
  // Each is named apart in records: <type>-<n> when a type repeats.
  assert.deepEqual([...new Set(first!.map((s) => s.source)), ...new Set(second!.map((s) => s.source))], ['cc3m-1', 'cc3m-2']);
  // Images are still read from each sample's own folder.
  const [firstReader, secondReader] = openSources(configs, {});
  assert.ok((await secondReader!.readImage(second![0]!.image)).length > 0);
  assert.ok((await firstReader!.readImage(first![0]!.image)).length > 0);
});

test('a source is named by its type alone, its configured name, or <type>-<n> when its type repeats; two sources may not share a name', () => {
  const cc3m = { type: 'cc3m', uri: 'x' };
  assert.deepEqual(sourceNames([cc3m, { type: 'rico', uri: 'y' }]), ['cc3m', 'rico']);
  assert.deepEqual(sourceNames([cc3m, { type: 'rico', uri: 'y' }, cc3m, { ...cc3m, name: 'mine' }]), ['cc3m-1', 'rico', 'cc3m-2', 'mine']);
  const parse = (sources: object[]) => parseBuildConfig({ buildId: 'b', output: 'out', sources, maxSamples: 4, models: { default: { model: 'm' } } } as BuildConfigInput);
  assert.throws(() => parse([cc3m, { ...cc3m, name: 'cc3m-1' }]), /sources\.1\.name.*'cc3m-1' already names sources\[0\]/s);
  assert.throws(() => parse([{ ...cc3m, name: 'a b' }]), /sources\.0\.name/);
  assert.doesNotThrow(() => parse([cc3m, { ...cc3m, name: 'other' }]));
});
