/**
 * The CC3M source (sources/cc3m/reader.ts) in each layout (webdataset tars, files, flat) with its side files:
 * what it plans, what it reads by range, and the problems it names. One suite, run on each store by its tier.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sourceSchema, type SourceConfig, type SourceConfigOf } from '../../config/sourceConfig.js';
import { sampleIdFor } from '../../domain/hashing.js';
import type { SourceSample } from '../../domain/sample.js';
import { openStore } from '../../storage/openStore.js';
import type { S3Options } from '../../storage/s3Store.js';
import { openSource } from '../../sources/source.js';
import { SourceError, isProblem, type SourceItem, type SourceProblem } from '../../sources/contract.js';
import { readItems, type Backend } from '../fixtures/backends.js';
import { writeCc3m, type Cc3mFixtureOptions, type Cc3mLayoutName, type FixtureRecord } from '../fixtures/cc3m.js';

const SOURCE_INDEX = 2;
const LAYOUTS: Cc3mLayoutName[] = ['webdataset', 'files', 'flat'];

async function collect(config: SourceConfig, s3: S3Options): Promise<SourceItem[]> {
  return readItems(openSource(config, SOURCE_INDEX, s3));
}

function cc3mConfig(uri: string, layout: SourceConfigOf<'cc3m'>['layout'] = 'auto'): SourceConfig {
  return sourceSchema.parse({ type: 'cc3m', uri, layout, licenseNote: 'test licence' });
}

function samplesOf(items: SourceItem[]): SourceSample[] {
  return items.filter((i): i is SourceSample => !isProblem(i));
}

function problemsOf(items: SourceItem[]): SourceProblem[] {
  return items.filter(isProblem);
}

/**
 * The CC3M source's tests on one store; with `pyarrow` also those whose fixtures img2dataset's Parquet
 * side files are written by pyarrow (tools/venv), which only test/integration has.
 */
export function cc3mSourceTests(backend: Backend, options: { pyarrow: boolean }): void {
  describe(`CC3M source on ${backend.name}`, () => {
    before(() => backend.setUp());
    after(() => backend.tearDown());

    async function dataset(layout: Cc3mLayoutName, options?: Cc3mFixtureOptions): Promise<{ uri: string; records: FixtureRecord[] }> {
      const uri = backend.freshRoot();
      return { uri, records: await writeCc3m(openStore(uri, backend.s3), layout, options) };
    }

    for (const layout of LAYOUTS) {
      it(`reads the ${layout} layout, named or auto-detected, in key order with captions and image bytes`, async () => {
        const { uri, records } = await dataset(layout);
        const named = await collect(cc3mConfig(uri, layout), backend.s3);
        assert.deepEqual(await collect(cc3mConfig(uri, 'auto'), backend.s3), named, 'auto-detection reads the same samples');

        const samples = samplesOf(named);
        assert.equal(samples.length, named.length, 'no problems in a clean dataset');
        assert.deepEqual(
          samples.map((s) => [s.sourceId, s.caption]),
          records.map((r) => [r.key, r.caption]),
        );
        const reader = openSource(cc3mConfig(uri), SOURCE_INDEX, backend.s3);
        for (const [i, s] of samples.entries()) {
          const record = records[i]!;
          assert.equal(s.sampleId, sampleIdFor('cc3m', record.key));
          assert.equal(s.source, 'cc3m');
          assert.equal(s.licenseNote, 'test licence');
          assert.equal(s.image.sourceIndex, SOURCE_INDEX);
          assert.ok((await reader.readImage(s.image)).equals(record.image), `image bytes of ${record.key}`);
        }
        const first = samples[0]!.image;
        const expectedOrigin = {
          webdataset: { file: '00000.tar', member: '000000000.jpg' },
          files: { file: '00000/000000000.jpg' },
          flat: { file: '000000000.jpg' },
        }[layout];
        assert.deepEqual(reader.origin(first.locator), expectedOrigin);
        assert.equal(Array.isArray(first.locator.range), layout === 'webdataset', 'a streamed tar member is located by its byte range');
      });
    }

    it('reports a caption that is not valid UTF-8 as encoding:, not as U+FFFD text', async () => {
      const { uri, records } = await dataset('files');
      // Latin-1 "café": 0xE9 alone is not UTF-8.
      await openStore(uri, backend.s3).put(`00000/${records[1]!.key}.txt`, Buffer.from([0x63, 0x61, 0x66, 0xe9]));
      const items = await collect(cc3mConfig(uri, 'files'), backend.s3);
      const problems = problemsOf(items);
      assert.equal(problems.length, 1, JSON.stringify(problems));
      assert.match(problems[0]!.reason, /encoding: caption 00000\/\d+\.txt is not valid UTF-8/);
      assert.ok(samplesOf(items).every((s) => !s.caption?.includes('\ufffd')));
      assert.equal(samplesOf(items).length, records.length - 1);
    });

    it('fails on a missing root with a message naming the root and the expected layouts', async () => {
      const uri = backend.freshRoot();
      const error = await collect(cc3mConfig(uri), backend.s3).catch((e: unknown) => e);
      assert.ok(error instanceof SourceError);
      assert.ok(error.message.startsWith(`${uri}: `), error.message);
      assert.match(error.message, /missing or empty/);
      assert.match(error.message, /webdataset.*files.*flat/);
    });

    it('fails on a root that holds no known layout', async () => {
      const uri = backend.freshRoot();
      const store = openStore(uri, backend.s3);
      await store.put('README.md', '# my photos');
      await store.put('captions.csv', 'key,caption');
      const error = await collect(cc3mConfig(uri), backend.s3).catch((e: unknown) => e);
      assert.ok(error instanceof SourceError);
      assert.match(error.message, /none of its 2 files fits a known layout/);
      assert.match(error.message, /webdataset.*files.*flat/);
    });

    it('fails when the named layout is not what the root holds', async () => {
      const { uri } = await dataset('files');
      const error = await collect(cc3mConfig(uri, 'webdataset'), backend.s3).catch((e: unknown) => e);
      assert.ok(error instanceof SourceError);
      assert.match(error.message, /no webdataset records found/);
    });

    it('keeps the complete records of a truncated tar and reports the tar', async () => {
      const { uri, records } = await dataset('webdataset', { truncateInside: '000010001' });
      const items = await collect(cc3mConfig(uri), backend.s3);
      assert.deepEqual(
        items.map((i) => i.sourceId),
        ['000000000', '000000001', '000000002', '000010000', '00001.tar'],
      );
      const [problem] = problemsOf(items);
      assert.equal(problem?.sourceId, '00001.tar');
      assert.match(problem!.reason, /^tar 00001\.tar is truncated: .*'000010001\.jpg'.*; the records after 000010000 are lost$/);
      const kept = samplesOf(items).at(-1)!;
      const reader = openSource(cc3mConfig(uri), SOURCE_INDEX, backend.s3);
      assert.ok((await reader.readImage(kept.image)).equals(records[3]!.image));
    });

    it('reports a tar cut inside its first record as having no readable record', async () => {
      const { uri } = await dataset('webdataset', { truncateInside: '000000000', shards: 1 });
      const items = await collect(cc3mConfig(uri), backend.s3);
      assert.equal(items.length, 1);
      assert.match(problemsOf(items)[0]!.reason, /00000\.tar is truncated.*no record in it is readable/);
    });

    for (const layout of ['webdataset', 'files'] as const) {
      it(`reports a ${layout} record whose .json sidecar is not JSON, and keeps the others`, async () => {
        const { uri } = await dataset(layout, { brokenJson: '000000001' });
        const items = await collect(cc3mConfig(uri), backend.s3);
        assert.equal(samplesOf(items).length, 5);
        assert.deepEqual(
          problemsOf(items).map((p) => p.sourceId),
          ['000000001'],
        );
        const where = layout === 'webdataset' ? '00000.tar:000000001' : '00000/000000001';
        assert.match(problemsOf(items)[0]!.reason, new RegExp(`^${where}: .*000000001\\.json is not JSON`));
      });

      it(`reports a ${layout} record img2dataset failed to download, naming the status`, async () => {
        const { uri } = await dataset(layout, { failedDownload: '000010002' });
        const items = await collect(cc3mConfig(uri), backend.s3);
        assert.deepEqual(
          samplesOf(items).map((s) => s.sourceId),
          ['000000000', '000000001', '000000002', '000010000', '000010001'],
        );
        assert.deepEqual(
          problemsOf(items).map((p) => p.sourceId),
          ['000010002'],
        );
        assert.match(problemsOf(items)[0]!.reason, /status "failed_to_download" \(HTTP Error 404\)/);
      });
    }

    if (options.pyarrow) {
      it("plans a webdataset from img2dataset's parquet side files without reading a tar byte, and counts failed downloads", async () => {
        const { uri, records } = await dataset('webdataset', { sideFile: 'img2dataset', failedDownload: '000010002' });
        const store = openStore(uri, backend.s3);
        const tars = { '00000.tar': (await store.get('00000.tar'))!, '00001.tar': (await store.get('00001.tar'))! };
        // Planning must not need the tars' bytes: replace them with garbage while it runs.
        for (const tar of Object.keys(tars)) await store.put(tar, 'not a tar');
        const items = await collect(cc3mConfig(uri), backend.s3);
        for (const [tar, bytes] of Object.entries(tars)) await store.put(tar, bytes);

        const samples = samplesOf(items);
        const kept = records.filter((r) => r.key !== '000010002');
        assert.deepEqual(
          samples.map((s) => [s.sourceId, s.caption]),
          kept.map((r) => [r.key, r.caption]),
        );
        assert.deepEqual(samples[3]!.image, { sourceIndex: SOURCE_INDEX, locator: { tar: '00001.tar', record: '000010000' } });
        const [failed, ...others] = problemsOf(items);
        assert.deepEqual(others, []);
        assert.equal(failed!.kind, 'filtered');
        assert.equal(failed!.kind === 'filtered' && failed!.filter, 'img2dataset-failed_to_download');
        assert.match(failed!.reason, /^00001\.parquet:000010002: img2dataset status "failed_to_download" \(HTTP Error 404\)$/);

        // A shard finds each image's bytes by reading its tar's headers by range.
        const reader = openSource(cc3mConfig(uri), SOURCE_INDEX, backend.s3);
        for (const [i, s] of samples.entries()) assert.ok((await reader.readImage(s.image)).equals(kept[i]!.image), `image bytes of ${s.sourceId}`);
      });

      it('plans a truncated tar from its parquet: records before the damage read, a lost one names the damage', async () => {
        const { uri, records } = await dataset('webdataset', { sideFile: 'img2dataset', truncateInside: '000010001' });
        const items = await collect(cc3mConfig(uri), backend.s3);
        assert.equal(samplesOf(items).length, 6, 'the parquet lists every record as downloaded');
        const reader = openSource(cc3mConfig(uri), SOURCE_INDEX, backend.s3);
        const byId = new Map(samplesOf(items).map((s) => [s.sourceId, s]));
        assert.ok((await reader.readImage(byId.get('000010000')!.image)).equals(records[3]!.image));
        const error = await reader.readImage(byId.get('000010001')!.image).catch((e: unknown) => e);
        assert.ok(error instanceof SourceError, String(error));
        assert.match(error.message, /00001\.tar: no image for record 000010001 \(tar 00001\.tar is truncated/);
      });
    }
  });
}
