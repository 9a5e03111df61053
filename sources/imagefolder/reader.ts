/**
 * A folder of images (sources/imagefolder/definition.ts), local or on S3, in Hugging Face's ImageFolder
 * layout (https://huggingface.co/docs/datasets/image_dataset#imagefolder and
 * https://huggingface.co/docs/hub/datasets-image: `metadata.jsonl`, `metadata.csv` or
 * `metadata.parquet` beside the images, each row's `file_name` relative to the metadata file's folder,
 * metadata files at the root or in split folders such as `train/` and `test/`; other columns are
 * the image's features) or plain, every image file under the root a sample.
 *
 * The root is listed once at planning: its files' keys are held (about 100 bytes each) so that a row
 * naming a directory, a missing file or a file the OS cannot stat or name is reported as a problem
 * of that row alone, before any shard reads it.
 */
import type { SourceConfigOf } from '../../config/sourceConfig.js';
import type { ObjectInfo, ObjectStore } from '../../storage/objectStore.js';
import { sourceStore } from '../readers/extractedView.js';
import type { S3Options } from '../../storage/s3Store.js';
import { SourceError, damaged, filtered, inSegments, sourceSample, type SourceItem, type SourceProblem, type SourceReader } from '../contract.js';
import { cleanQuestion } from '../questions.js';
import { IMAGE_EXTENSIONS, datasetKey } from '../readers/datasetPath.js';
import { ParquetTableError, openParquetTable, readRows } from '../readers/hfParquet.js';
import { asObject, describeRoot, jsonLinesRecords } from '../readers/jsonFiles.js';
import { pathLocator, pathNamedReader } from '../readers/namedImages.js';
import { tsvRows } from '../readers/tsv.js';
import { unreadableFile } from '../readers/unreadableFiles.js';

type ImagefolderConfig = SourceConfigOf<'imagefolder'>;
type Layout = Exclude<ImagefolderConfig['layout'], 'auto'>;

const METADATA_FILES = ['metadata.jsonl', 'metadata.csv', 'metadata.parquet'];
/** Column names tried, in order, for each text when the config names none. */
const DETECTED = { caption: ['caption', 'text'], question: ['question', 'query'], answer: ['answer'] } as const;

const EXPECTED =
  'expected a folder of images: the ImageFolder layout (metadata.jsonl, metadata.csv or metadata.parquet with a file_name column, ' +
  'beside the images, at the root or in split folders such as train/ and test/), or image files (.jpg, .png, .webp...) under the root';

export function open(config: ImagefolderConfig, sourceIndex: number, s3: S3Options): SourceReader {
  const store = sourceStore(config.uri, s3);
  return pathNamedReader(store, {
    async *segments() {
      const listing = await listRoot(store, config);
      yield* inSegments(listing.layout === 'metadata' ? metadataItems(store, config, sourceIndex, listing) : imageItems(config, sourceIndex, listing));
    },
    async describe() {
      const listing = await listRoot(store, config);
      const detected = config.layout === 'auto' ? ' (detected)' : '';
      if (listing.layout === 'images') return `layout images${detected}: ${listing.images.length} image files`;
      const columns = Object.entries(config.columns ?? {}).map(([text, name]) => `${text} <- ${name}`);
      const mapping =
        columns.length > 0
          ? columns.join(', ')
          : `columns detected per file (${Object.entries(DETECTED)
              .map(([text, names]) => `${text} <- ${names.join('|')}`)
              .join(', ')})`;
      return `layout metadata${detected}: ${listing.metadata.join(', ')}; ${mapping}`;
    },
  });
}

interface Listing {
  layout: Layout;
  /** Metadata files, in listing order. */
  metadata: string[];
  /** Image files (or files a metadata row may name), in listing order; unreadable ones with their reason. */
  images: ObjectInfo[];
  files: Map<string, ObjectInfo>;
  /** Every folder that holds a listed file, to tell a row naming a directory from one naming a missing file. */
  folders: Set<string>;
}

async function listRoot(store: ObjectStore, config: ImagefolderConfig): Promise<Listing> {
  const metadata: string[] = [];
  const images: ObjectInfo[] = [];
  const files = new Map<string, ObjectInfo>();
  const folders = new Set<string>();
  let listed = 0;
  for await (const info of store.list('')) {
    listed++;
    const slash = info.key.indexOf('/');
    if (config.splits && (slash < 0 || !config.splits.includes(info.key.slice(0, slash)))) continue;
    const name = info.key.slice(info.key.lastIndexOf('/') + 1);
    if (METADATA_FILES.includes(name.toLowerCase())) metadata.push(info.key);
    else {
      files.set(info.key, info);
      if (isImage(name)) images.push(info);
    }
    for (let at = info.key.indexOf('/'); at >= 0; at = info.key.indexOf('/', at + 1)) folders.add(info.key.slice(0, at));
  }
  const layout = config.layout !== 'auto' ? config.layout : metadata.length > 0 ? 'metadata' : 'images';
  const found = layout === 'metadata' ? metadata.length : images.length;
  if (found === 0) {
    const where = config.splits ? ` in ${config.splits.map((s) => `${s}/`).join(', ')}` : '';
    const what = listed === 0 ? await describeRoot(store) : `${listed} files, no ${layout === 'metadata' ? 'metadata file' : 'image file'}${where}`;
    throw new SourceError(store.root, `no ImageFolder ${layout} found (${what}); ${EXPECTED}`);
  }
  return { layout, metadata, images, files, folders };
}

function isImage(name: string): boolean {
  const dot = name.lastIndexOf('.');
  return dot > 0 && IMAGE_EXTENSIONS.has(name.slice(dot + 1).toLowerCase());
}

/** Plain layout: every image file a sample, its path its source id. */
async function* imageItems(config: ImagefolderConfig, sourceIndex: number, listing: Listing): AsyncGenerator<SourceItem> {
  for (const info of listing.images) {
    if (info.unreadable) yield unreadableFile(info.key, info.key, info.unreadable);
    else yield sourceSample('imagefolder', info.key, config.licenseNote, { sourceIndex, locator: pathLocator(info.key) });
  }
}

/** One row of a metadata file: its position and its columns. */
interface MetadataRow {
  index: number;
  value: Record<string, unknown> | undefined;
}

async function* metadataItems(store: ObjectStore, config: ImagefolderConfig, sourceIndex: number, listing: Listing): AsyncGenerator<SourceItem> {
  for (const file of listing.metadata) {
    const dir = file.includes('/') ? file.slice(0, file.lastIndexOf('/')) : '';
    for await (const row of metadataRows(store, file)) {
      yield 'problem' in row ? row : rowItem(row, file, dir, config, sourceIndex, listing);
    }
  }
}

/** The rows of one metadata file, by its format; a malformed line or a damaged file is a problem, the rest is read. */
async function* metadataRows(store: ObjectStore, file: string): AsyncGenerator<MetadataRow | SourceProblem> {
  const format = file.slice(file.lastIndexOf('.') + 1).toLowerCase();
  if (format === 'jsonl') {
    for await (const record of jsonLinesRecords(store, file, EXPECTED)) yield 'problem' in record ? record : { index: record.index, value: asObject(record.value) };
  } else if (format === 'csv') {
    let header: string[] | undefined;
    let index = 0;
    for await (const fields of tsvRows((await store.openRead(file)) as AsyncIterable<Buffer>, ',')) {
      if (!header) header = fields;
      else yield { index: index++, value: Object.fromEntries(header.map((name, i) => [name, fields[i]])) };
    }
  } else {
    yield* parquetRows(store, file);
  }
}

async function* parquetRows(store: ObjectStore, file: string): AsyncGenerator<MetadataRow | SourceProblem> {
  let size = 0;
  for await (const info of store.list(file)) if (info.key === file) size = info.size;
  try {
    const table = await openParquetTable(store, file, size);
    const names = table.columns.map((c) => c.name);
    for (let group = 0; group + 1 < table.rowGroupStarts.length; group++) {
      const columns = await readRows(table, group, group + 1, names);
      const count = table.rowGroupStarts[group + 1]! - table.rowGroupStarts[group]!;
      for (let i = 0; i < count; i++) yield { index: table.rowGroupStarts[group]! + i, value: Object.fromEntries(names.map((n) => [n, columns[n]![i]])) };
    }
  } catch (err) {
    if (!(err instanceof ParquetTableError)) throw err;
    yield damaged(file, 'parquet-unreadable', `${file}: ${err.message}; the rows after the damage are not read`);
  }
}

function rowItem(row: MetadataRow, file: string, dir: string, config: ImagefolderConfig, sourceIndex: number, listing: Listing): SourceItem {
  const at = `${file}#${row.index}`;
  const fileName = row.value?.file_name;
  if (typeof fileName !== 'string' || fileName === '') return damaged(at, 'no-file-name', `${at}: no file_name (the image's path, relative to ${dir || 'the root'})`);
  const sourceId = `${at}:${fileName}`;
  const key = datasetKey(dir, fileName);
  if (key === undefined) return damaged(sourceId, 'outside-root', `${sourceId}: file_name '${fileName}' leaves the dataset root; not read`);
  const info = listing.files.get(key);
  if (info?.unreadable) return unreadableFile(sourceId, key, info.unreadable);
  if (!info && listing.folders.has(key)) return damaged(sourceId, 'not-a-file', `${sourceId}: '${key}' is a directory, not an image file`);
  if (!info) return damaged(sourceId, 'missing-file', `${sourceId}: '${key}' is not in the dataset`);

  const text = (kind: keyof typeof DETECTED): string | undefined => {
    const names = config.columns?.[kind] ? [config.columns[kind]] : DETECTED[kind];
    for (const name of names) {
      const value = row.value?.[name];
      if (typeof value === 'string' && value.trim() !== '') return value.trim();
      if (Array.isArray(value) && typeof value[0] === 'string') return value.join('; ');
    }
    return undefined;
  };
  const question = text('question');
  const verdict = question === undefined ? undefined : cleanQuestion(question, config.question);
  if (verdict && !verdict.ok) return filtered(sourceId, verdict.reason, `${sourceId}: ${verdict.detail}`);
  return sourceSample(
    'imagefolder',
    sourceId,
    config.licenseNote,
    { sourceIndex, locator: pathLocator(key) },
    {
      caption: text('caption'),
      originalInstruction: verdict?.question,
      originalAnswer: verdict ? text('answer') : undefined,
    },
  );
}
