/**
 * ChartQA (vis-nlp/ChartQA) as downloaded:
 *   ChartQA Dataset/{split}/{split}_human.json, {split}_augmented.json   arrays of {imgname, query, label}
 *   ChartQA Dataset/{split}/png/<imgname>                               the charts
 *   ChartQA Dataset/{split}/tables/<stem>.csv                           optional data tables
 * for split in train, val, test. The root may be the folder holding `ChartQA Dataset` or that folder
 * itself. A chart's table, cut to whole rows within a few KB, becomes the sample's grounding.
 */
import type { SourceConfigOf } from '../../config/sourceConfig.js';
import type { ObjectStore } from '../../storage/objectStore.js';
import { sourceStore } from '../readers/extractedView.js';
import type { S3Options } from '../../storage/s3Store.js';
import { SourceError, inSegments, damaged, filtered, sourceSample, type SourceItem, type SourceReader } from '../contract.js';
import { pathLocator } from '../readers/namedImages.js';
import { hasParquetFiles, parquetImages } from '../readers/hfRows.js';
import { chartqaHubItems } from './hub.js';
import { datasetKey, joinPath } from '../readers/datasetPath.js';
import { asObject, describeRoot, jsonFileRecords, requireFiles, type JsonRecord } from '../readers/jsonFiles.js';
import { orderedMap } from '../readers/orderedMap.js';
import { cleanQuestion } from '../questions.js';
import { chartLabel } from '../referenceAnswers.js';
import { decodeUtf8, encodingReason } from '../readers/utf8.js';

type ChartqaConfig = SourceConfigOf<'chartqa'>;

const DATASET_DIR = 'ChartQA Dataset';
/** Grounding budget for a data table: enough for the rows a question is about, small enough for every prompt. */
export const TABLE_LIMIT = 4096;
/** Records whose table is fetched ahead (a GET each). */
const READ_AHEAD = 16;

const EXPECTED =
  `expected the ChartQA layout: '${DATASET_DIR}/{split}/{split}_human.json' and '{split}_augmented.json' ` +
  `(arrays of {imgname, query, label}) with charts in '{split}/png/', optional tables in '{split}/tables/'; ` +
  `the root is the folder holding '${DATASET_DIR}' or that folder itself; or the Hub's Parquet (data/{split}-*.parquet with the charts inside: ` +
  'HuggingFaceM4/ChartQA, lmms-lab/ChartQA, ahmed-masry/ChartQA)';

export function open(config: ChartqaConfig, sourceIndex: number, s3: S3Options): SourceReader {
  const store = sourceStore(config.uri, s3);
  const images = parquetImages(store);
  return {
    segments: () => inSegments(chartqaSamples(store, config, sourceIndex)),
    readImage: (ref) => images.read(ref.locator),
    origin: images.origin,
    describe: async () => {
      const base = await datasetDir(store, config);
      if (base === HUB) return `Hub Parquet (charts inside), splits ${config.splits.join(', ')}, sets ${config.sets.join(', ')}`;
      const tables = config.attachTables ? ', tables attached' : '';
      return `'${base || '.'}' splits ${config.splits.join(', ')}, sets ${config.sets.join(', ')}${tables}`;
    },
  };
}

interface SplitFile {
  split: string;
  set: string;
  /** `ChartQA Dataset/train` or `train`. */
  dir: string;
  file: string;
}

async function* chartqaSamples(store: ObjectStore, config: ChartqaConfig, sourceIndex: number): AsyncGenerator<SourceItem> {
  const base = await datasetDir(store, config);
  if (base === HUB) {
    yield* chartqaHubItems(store, config, sourceIndex);
    return;
  }
  const files: SplitFile[] = config.splits.flatMap((split) =>
    config.sets.map((set) => ({ split, set, dir: joinPath(base, split), file: joinPath(base, split, `${split}_${set}.json`) })),
  );
  await requireFiles(
    store,
    files.map((f) => f.file),
    EXPECTED,
  );
  for (const split of files) {
    yield* orderedMap(jsonFileRecords(store, split.file, EXPECTED), READ_AHEAD, async (record) =>
      'problem' in record ? record : toItem(record, split, store, config, sourceIndex),
    );
  }
}

/** The Hub's Parquet layouts (hub.ts) rather than a release folder. */
const HUB = Symbol('hub');

/**
 * '' when the root is the `ChartQA Dataset` folder itself, else that folder's name (probed with the
 * first configured file), or HUB when the root holds the Hub's Parquet instead (`layout` may say which).
 */
async function datasetDir(store: ObjectStore, config: ChartqaConfig): Promise<string | typeof HUB> {
  if (config.layout === 'hub') return HUB;
  const split = config.splits[0]!;
  const probe = `${split}/${split}_${config.sets[0]!}.json`;
  if (await store.exists(joinPath(DATASET_DIR, probe))) return DATASET_DIR;
  if (await store.exists(probe)) return '';
  if (config.layout === 'auto' && (await hasParquetFiles(store, {}))) return HUB;
  throw new SourceError(store.root, `no ChartQA dataset found: neither '${DATASET_DIR}/${probe}' nor '${probe}' exists (${await describeRoot(store, [probe])}); ${EXPECTED}`);
}

/** sourceId is `<split>/<set>/<index>/<imgname>`: position and chart, stable while the file is. */
async function toItem({ index, value }: JsonRecord, at: SplitFile, store: ObjectStore, config: ChartqaConfig, sourceIndex: number): Promise<SourceItem> {
  const position = `${at.split}/${at.set}/${index}`;
  const record = asObject(value);
  if (!record || typeof record.imgname !== 'string' || typeof record.query !== 'string') {
    return damaged(position, 'bad-record', `${at.file}#${index}: expected {imgname, query, label}, got ${JSON.stringify(value).slice(0, 80)}`);
  }
  const sourceId = `${position}/${record.imgname}`;
  const key = datasetKey(joinPath(at.dir, 'png'), record.imgname);
  if (key === undefined) return damaged(sourceId, 'outside-root', `${sourceId}: imgname '${record.imgname}' leaves the dataset root; not read`);
  const verdict = cleanQuestion(record.query, config.question);
  if (!verdict.ok) return filtered(sourceId, verdict.reason, `${sourceId}: ${verdict.detail}`);

  // Labels are chart data cells: list strings and date serials are rewritten, unparseable lists counted.
  const rawLabel = typeof record.label === 'string' || typeof record.label === 'number' ? String(record.label) : undefined;
  const label = rawLabel === undefined ? undefined : chartLabel(rawLabel, record.query);
  if (label && !label.ok) return filtered(sourceId, label.filter, `${sourceId}: ${label.detail}`);
  const table = config.attachTables ? await chartTable(store, at.dir, record.imgname) : undefined;
  // Like every other dataset text, a table that is not UTF-8 is reported, never passed on as U+FFFD.
  if (table && 'notUtf8' in table) return damaged(sourceId, 'encoding', `${sourceId}: ${encodingReason(table.notUtf8)}`);
  return sourceSample(
    'chartqa',
    sourceId,
    config.licenseNote,
    { sourceIndex, locator: pathLocator(key) },
    {
      originalInstruction: verdict.question,
      originalAnswer: label?.answer,
      grounding: table?.text,
    },
  );
}

/** The chart's data table, if the dataset has one, or the table's key when it is not valid UTF-8. */
async function chartTable(store: ObjectStore, dir: string, imgname: string): Promise<{ text: string } | { notUtf8: string } | undefined> {
  const stem = imgname.replace(/\.[^./]*$/, '');
  const key = datasetKey(joinPath(dir, 'tables'), `${stem}.csv`);
  const csv = key === undefined ? undefined : await store.get(key);
  if (csv === undefined) return undefined;
  const text = decodeUtf8(csv);
  return text === undefined ? { notUtf8: key! } : { text: tableText(text) };
}

/** Whole rows up to TABLE_LIMIT characters, saying when rows were left out. */
function tableText(csv: string): string {
  const text = csv.replace(/\r\n?/g, '\n').trim();
  if (text.length <= TABLE_LIMIT) return text;
  const cut = text.lastIndexOf('\n', TABLE_LIMIT);
  return `${text.slice(0, cut > 0 ? cut : TABLE_LIMIT)}\n… (table cut at ${TABLE_LIMIT} characters)`;
}
