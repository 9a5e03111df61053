import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { sourceSchema } from '../../config/sourceConfig.js';
import { openSource } from '../../sources/source.js';
import { LocalStore } from '../../storage/localStore.js';
import { ColumnMappingError, describeMapping, mapColumns } from '../../sources/readers/hfColumns.js';
import { hfParquetFiles, hubSnapshot, splitAndConfig } from '../../sources/readers/hfDataset.js';
import { openParquetTable, ParquetTableError, readImageCell, readRows, type ParquetTable } from '../../sources/readers/hfParquet.js';
import { pathLocator } from '../../sources/readers/namedImages.js';

/** Tables written by the real `datasets` library (test/fixtures/hub/make_hub_fixtures.py). */
const HUB = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'hub', 'data');
const M4 = 'hf-cache/datasets--HuggingFaceM4--ChartQA/snapshots/b605b6e08b57faf4359aeb2fe6a3ca595f99b6c5';

async function table(dir: string, key: string, onRead?: (bytes: number) => void): Promise<{ store: LocalStore; table: ParquetTable }> {
  const store = new LocalStore(path.join(HUB, dir));
  for await (const object of store.list(key)) if (object.key === key) return { store, table: await openParquetTable(store, key, object.size, onRead) };
  throw new Error(`no ${key}`);
}

describe('Hugging Face Parquet columns', () => {
  it('detects the Image feature, the query and the label list (HuggingFaceM4/ChartQA)', async () => {
    const { table: t } = await table(M4, 'data/train-00000-of-00001.parquet');
    assert.deepEqual(
      t.columns.map((c) => [c.name, c.kind, c.feature]),
      [
        ['image', 'image-struct', 'Image'],
        ['query', 'string', 'Value'],
        ['label', 'string-list', 'List'],
        ['human_or_machine', 'number', 'ClassLabel'],
      ],
    );
    assert.equal(describeMapping(mapColumns(t)), 'image ← image (bytes; huggingface Image feature), question ← query, answer ← label');
    const asked = { image: 'image', answer: 'label' };
    assert.equal(describeMapping(mapColumns(t, asked), asked), 'image ← image (bytes; columns.image), question ← query, answer ← label (columns.answer)');
  });

  it('takes plain binary images (ahmed-masry/ChartQA) and path strings under the root', async () => {
    assert.equal(
      describeMapping(mapColumns((await table('chartqa-masry', 'data/train-00000-of-00002.parquet')).table)),
      'image ← image (bytes; binary column), question ← query, answer ← label',
    );
    assert.equal(describeMapping(mapColumns((await table('parquet/paths', 'train.parquet')).table)), 'image ← file (path under the root; path column name), text ← caption');
  });

  it('prefers the column named image among several Image features (RICO-Screen2Words), and finds LLaVA conversations', async () => {
    assert.equal(mapColumns((await table('rico-screen2words', 'data/train-00000-of-00001.parquet')).table).image.name, 'image');
    const ov = mapColumns((await table('geo170k-onevision', 'geo170k(qa)/train-00000-of-00001.parquet')).table);
    assert.deepEqual([ov.conversations, ov.id], ['conversations', 'id']);
  });

  it('names what was asked and what the file holds when a column is not there', async () => {
    const { table: t } = await table(M4, 'data/train-00000-of-00001.parquet');
    assert.throws(
      () => mapColumns(t, { question: 'prompt' }),
      (err: unknown) =>
        err instanceof ColumnMappingError &&
        err.message.includes("columns.question is 'prompt'") &&
        err.message.includes('image: image-struct (Image), query: string, label: string-list (List), human_or_machine: number (ClassLabel)'),
    );
    assert.throws(() => mapColumns(t, { answer: 'image' }), /columns\.answer is 'image', a image-struct \(Image\) column/);
  });
});

describe('Hugging Face Parquet rows', () => {
  it('reads a row group’s small columns without the image bytes', async () => {
    let read = 0;
    const { table: t } = await table(M4, 'data/train-00000-of-00001.parquet', (bytes) => (read += bytes));
    const footer = read;
    assert.deepEqual(await readRows(t, 1, 2, ['query', 'label']), {
      query: ['How many bars are above 30?', 'What is the difference between the two largest values?'],
      label: [['3'], ['12.5']],
    });
    const imageBytes = Number(t.metadata.row_groups[1]!.columns.find((c) => c.meta_data?.path_in_schema[0] === 'image')!.meta_data!.total_compressed_size);
    assert.ok(read - footer < imageBytes, `planning read ${read - footer} bytes; the row group's images are ${imageBytes}`);
  });

  it('reads the image of one row by its row group, and null for a null cell', async () => {
    const { store, table: t } = await table(M4, 'data/train-00000-of-00001.parquet');
    const bytes = await readImageCell(store, t, 'image', 3);
    assert.deepEqual([(await sharp(bytes!).metadata()).format, (await sharp(bytes!).metadata()).width], ['png', 256]);
    const nulls = await table('parquet/nulls', 'train.parquet');
    assert.equal(await readImageCell(nulls.store, nulls.table, 'image', 1), null);
    assert.ok(await readImageCell(nulls.store, nulls.table, 'image', 2));
  });

  it('names the file and row group that does not decode; the others read', async () => {
    const { table: t } = await table('parquet/damaged', 'train.parquet');
    assert.equal(t.metadata.row_groups.length, 3);
    assert.equal((await readRows(t, 0, 1, ['text'])).text!.length, 2);
    await assert.rejects(readRows(t, 0, 3, ['text']), (err: unknown) => err instanceof ParquetTableError && /train\.parquet row groups 0-2 \(rows 0-5\)/.test(err.message));
    await assert.rejects(readRows(t, 1, 2, ['text']), (err: unknown) => err instanceof ParquetTableError && /train\.parquet row group 1 \(rows 2-3\)/.test(err.message));
    assert.deepEqual(await readRows(t, 2, 3, ['text']), { text: ['caption number 4', 'caption number 5'] });
  });
});

describe('Hugging Face dataset files', () => {
  it('tells split and config from the Hub file names', () => {
    assert.deepEqual(splitAndConfig('data/train-00000-of-00003-194c9400785577a2.parquet'), { split: 'train', config: 'default' });
    assert.deepEqual(splitAndConfig('geo170k(qa)/train-00000-of-00001.parquet'), { split: 'train', config: 'geo170k(qa)' });
    assert.deepEqual(splitAndConfig('default/partial-train/0003.parquet'), { split: 'train', config: 'default' });
    assert.deepEqual(splitAndConfig('train.parquet'), { split: 'train', config: 'default' });
  });

  it('keeps the files of the splits asked for, and says what the root holds otherwise', async () => {
    const store = new LocalStore(path.join(HUB, 'chartqa-masry'));
    assert.deepEqual(
      (await hfParquetFiles(store, { splits: ['val'] })).files.map((f) => f.key),
      ['data/val-00000-of-00001.parquet'],
    );
    assert.equal((await hfParquetFiles(store, { splits: ['test'] })).none, 'no .parquet file of split test: the root holds train, val');
  });

  it('names the repository and revision of a Hub cache snapshot', () => {
    assert.deepEqual(hubSnapshot(path.join(HUB, M4)), { repo: 'HuggingFaceM4/ChartQA', revision: 'b605b6e08b57faf4359aeb2fe6a3ca595f99b6c5' });
    assert.equal(hubSnapshot(path.join(HUB, 'chartqa-masry')), undefined);
  });

  it('the parquet source reads around a damaged row group, in order, and builds each sample from its own row', async () => {
    const segments = [];
    for await (const segment of openSource(sourceSchema.parse({ type: 'parquet', uri: path.join(HUB, 'parquet/damaged') }), 0, {}).segments()) segments.push(segment);
    assert.deepEqual(
      segments.flatMap((s) => s.records.map((r) => (typeof r === 'string' ? r : `${r.kind === 'damaged' ? r.code : r.filter} ${r.sourceId}`))),
      ['train.parquet#0', 'train.parquet#1', 'parquet-row-group train.parquet#row-group-1', 'train.parquet#4', 'train.parquet#5'],
    );
    const samples = segments.flatMap((s) => s.sampleIds.map((id, i) => ({ id, sample: s.sample(i) })));
    assert.deepEqual(
      samples.map(({ id, sample }) => [id === sample.sampleId, sample.sourceId, sample.caption, sample.image.locator.row, sample.image.locator.rowGroup]),
      [
        [true, 'train.parquet#0', 'caption number 0', 0, 0],
        [true, 'train.parquet#1', 'caption number 1', 1, 0],
        [true, 'train.parquet#4', 'caption number 4', 4, 2],
        [true, 'train.parquet#5', 'caption number 5', 5, 2],
      ],
    );
  });

  it('the parquet source names each row whose image path or question it cannot use, and builds the others from their own rows', async () => {
    const segments = [];
    for await (const segment of openSource(sourceSchema.parse({ type: 'parquet', uri: path.join(HUB, 'parquet/badpaths') }), 0, {}).segments()) segments.push(segment);
    assert.deepEqual(
      segments.flatMap((s) => s.records.map((r) => (typeof r === 'string' ? r : `${r.kind} ${r.kind === 'damaged' ? r.code : r.filter} ${r.sourceId}`))),
      [
        'train.parquet#0',
        'filtered no-image train.parquet#1',
        'damaged outside-root train.parquet#2',
        'filtered multiple-choice train.parquet#3',
        'filtered no-image train.parquet#4',
        'train.parquet#5',
      ],
    );
    const samples = segments.flatMap((s) => s.sampleIds.map((id, i) => ({ id, sample: s.sample(i) })));
    assert.deepEqual(
      samples.map(({ id, sample }) => [id === sample.sampleId, sample.sourceId, sample.originalInstruction, sample.image.locator]),
      [
        [true, 'train.parquet#0', 'What is drawn here?', pathLocator('images/0.png')],
        [true, 'train.parquet#5', 'What is on the left?', pathLocator('images/5.png')],
      ],
    );
  });
});
