/**
 * CC3M as users have it from img2dataset (NOTES §5), on local disk or S3:
 *   webdataset  `00000.tar` shards at the root holding `{key}.jpg|.txt|.json`, each with img2dataset's
 *               `00000.parquet` beside it: planning reads the parquet (keys, statuses, captions) and no
 *               tar byte; an image's byte range is found when a shard reads it, by seeking in the tar
 *               in the parquet's record order (a few ranged reads), else by reading that tar's headers
 *               by range, once per tar and worker. A tar without a usable parquet is streamed.
 *   files       `00000/000000000.jpg|.txt|.json`
 *   flat        images at the root, with an optional same-stem `.txt` caption
 * A record is the files sharing a key: the file name up to its first '.', the webdataset convention.
 * Order is listing order (lexicographic keys) and, inside a tar, archive order; both are fixed by the data.
 */
import type { SourceConfigOf } from '../../config/sourceConfig.js';

type Cc3mSourceConfig = SourceConfigOf<'cc3m'>;
import type { ObjectStore } from '../../storage/objectStore.js';
import { sourceStore } from '../readers/extractedView.js';
import type { S3Options } from '../../storage/s3Store.js';
import {
  SourceError,
  damaged,
  filtered,
  inSegments,
  lazySegment,
  locatorField,
  readStored,
  sourceSample,
  type SourceSegment,
  type SourceItem,
  type SourceProblem,
  type SourceReader,
} from '../contract.js';
import type { ImageLocator, ImageOrigin } from '../../domain/sample.js';
import { IMAGE_EXTENSIONS } from '../readers/datasetPath.js';
import { unreadableFile } from '../readers/unreadableFiles.js';
import { Img2datasetParquetError, openImg2datasetParquet, type Img2datasetColumns } from '../readers/img2datasetParquet.js';
import { decodeUtf8, encodingReason } from '../readers/utf8.js';
import { orderedMap } from '../readers/orderedMap.js';
import { TarError, tarEntries, tarEntriesByRange } from '../readers/tar.js';
import { seekTarMember, type TarOrder } from '../readers/tarSeek.js';

type Layout = Exclude<Cc3mSourceConfig['layout'], 'auto'>;

/** Sidecars up to this size are kept while streaming a tar; a larger one is read by range when needed. */
const MAX_CAPTURED_SIDECAR = 1 << 20;

/** Records of the files layout cost a GET per sidecar: this many are resolved ahead, still yielded in order. */
const READ_AHEAD = 16;
/** img2dataset side files fetched ahead of the tar being planned (~0.4 MB for 10k rows by default). */
const SIDE_FILES_AHEAD = 8;

const EXPECTED_LAYOUTS =
  'expected an img2dataset CC3M layout: webdataset (*.tar shards at the root, e.g. 00000.tar), ' +
  'files (numbered folders: 00000/000000000.jpg|.txt|.json) or flat (.jpg/.jpeg/.png/.webp/.gif/.tiff/.avif/.bmp images at the root)';

export function open(config: Cc3mSourceConfig, sourceIndex: number, s3: S3Options): SourceReader {
  const store = sourceStore(config.uri, s3);
  const tarImages = new TarImageIndex(store);
  return {
    segments: () => cc3mSegments(store, config, sourceIndex),
    readImage: async ({ locator }) => {
      if (locator.tar === undefined) return readStored(store, { key: locatorField(locator, 'path', 'string') });
      const tar = locatorField(locator, 'tar', 'string');
      if (locator.range !== undefined) return readStored(store, { key: tar, range: rangeOf(locator) });
      return readStored(store, await tarImages.find(tar, locatorField(locator, 'record', 'string')));
    },
    origin: originOf,
    describe: async () => (config.layout === 'auto' ? `layout ${await detectLayout(store)} (detected)` : `layout ${config.layout}`),
  };
}

/**
 * CC3M's locators: `{path}` (files and flat layouts), `{tar, member, range}` (a member found by
 * streaming its tar) and `{tar, record}` (a record planned from the tar's side file, its byte range
 * found when a shard reads it).
 */
function originOf(locator: ImageLocator): ImageOrigin {
  if (locator.tar === undefined) return { file: locatorField(locator, 'path', 'string') };
  const file = locatorField(locator, 'tar', 'string');
  return locator.member === undefined ? { file, record: locatorField(locator, 'record', 'string') } : { file, member: locatorField(locator, 'member', 'string') };
}

function rangeOf(locator: ImageLocator): [number, number] {
  const range = locator.range;
  if (!Array.isArray(range) || range.length !== 2 || !range.every((n) => typeof n === 'number')) {
    throw new Error(`image locator ${JSON.stringify(locator)} has no byte range [start, end]: this source did not make it`);
  }
  return [range[0] as number, range[1] as number];
}

async function* cc3mSegments(store: ObjectStore, config: Cc3mSourceConfig, sourceIndex: number): AsyncGenerator<SourceSegment> {
  const layout = config.layout === 'auto' ? await detectLayout(store) : config.layout;
  const toSegments = (records: AsyncIterable<Cc3mRecord | SourceProblem>) =>
    inSegments(orderedMap(records, READ_AHEAD, (record) => ('problem' in record ? Promise.resolve(record) : toItem(record, store, config, sourceIndex))));
  const segments = layout === 'webdataset' ? webdatasetSegments(store, config, sourceIndex, toSegments) : toSegments(RECORDS[layout](store));
  let seen = 0;
  for await (const segment of segments) {
    seen += segment.records.length;
    yield segment;
  }
  if (seen === 0) throw new SourceError(store.root, `no ${layout} records found; ${EXPECTED_LAYOUTS}`);
}

/** The first object that only one layout would hold decides; listing stops there. */
async function detectLayout(store: ObjectStore): Promise<Layout> {
  let listed = 0;
  for await (const { key } of store.list('')) {
    listed++;
    if (isRootTar(key)) return 'webdataset';
    const kind = fileKind(key);
    if (kind === 'image' && isInNumberedFolder(key)) return 'files';
    if (kind === 'image' && !key.includes('/')) return 'flat';
  }
  const what = listed === 0 ? 'the root is missing or empty' : `none of its ${listed} files fits a known layout`;
  throw new SourceError(store.root, `no CC3M dataset found (${what}); ${EXPECTED_LAYOUTS}`);
}

/** One file of a record: a plain object, or a member of a tar (its byte range, maybe its bytes). */
interface Member {
  path: string;
  key: string;
  /** Listed but not readable (ObjectInfo.unreadable): the record is a problem of its own. */
  unreadable?: string;
  range?: [number, number];
  data?: Buffer;
}

interface Cc3mRecord {
  /** Where the record lives, for messages: `00000/000000003` or `00000.tar:000000003`. */
  where: string;
  sourceId: string;
  members: (Member & { kind: 'image' | 'txt' | 'json' })[];
}

const RECORDS: Record<Exclude<Layout, 'webdataset'>, (store: ObjectStore) => AsyncIterable<Cc3mRecord | SourceProblem>> = {
  files: (store) => objectRecords(store, isInNumberedFolder),
  flat: (store) => objectRecords(store, (key) => !key.includes('/')),
};

async function* objectRecords(store: ObjectStore, include: (key: string) => boolean): AsyncGenerator<Cc3mRecord> {
  const members = mapAsync(store.list(''), ({ key, unreadable }): Member | undefined => (include(key) ? { path: key, key, ...(unreadable ? { unreadable } : {}) } : undefined));
  yield* groupRecords(members, '');
}

async function* mapAsync<T, U>(items: AsyncIterable<T>, fn: (item: T) => U | undefined): AsyncGenerator<U> {
  for await (const item of items) {
    const mapped = fn(item);
    if (mapped !== undefined) yield mapped;
  }
}

/**
 * Each root tar's records: from its img2dataset parquet when there is a usable one (listed just before
 * it: '.p' sorts before '.t'), else by streaming the tar. Side files are fetched and decoded
 * SIDE_FILES_AHEAD tars ahead, in order: on S3 a GET's latency per tar, paid one tar at a time,
 * would otherwise add up over the hundreds of tars of a real dataset.
 */
async function* webdatasetSegments(
  store: ObjectStore,
  config: Cc3mSourceConfig,
  sourceIndex: number,
  toSegments: (records: AsyncIterable<Cc3mRecord | SourceProblem>) => AsyncIterable<SourceSegment>,
): AsyncGenerator<SourceSegment> {
  const parquets = new Set<string>();
  const tars = mapAsync(store.list(''), ({ key }) => {
    if (!key.includes('/') && key.endsWith('.parquet')) parquets.add(key);
    return isRootTar(key) ? key : undefined;
  });
  // The tar's parquet, if any, was listed (and added) before the tar itself reaches this map.
  // Only the bytes are fetched ahead: rows decoded ahead would outlive young-generation collections.
  const sideFiles = orderedMap(tars, SIDE_FILES_AHEAD, async (tar) => {
    const parquet = sideFileOf(tar);
    return { tar, parquet, bytes: parquets.has(parquet) ? await store.get(parquet) : undefined };
  });
  for await (const { tar, parquet, bytes } of sideFiles) {
    const rows = bytes && (await sideFileRows(bytes, parquet, { captions: true }));
    if (rows) yield parquetSegment(rows, tar, parquet, config, sourceIndex);
    else yield* toSegments(tarRecords(store, tar));
  }
}

/** img2dataset's side file of a root tar: `00000.tar` -> `00000.parquet`. */
function sideFileOf(tar: string): string {
  return `${tar.slice(0, -'.tar'.length)}.parquet`;
}

/**
 * A tar's rows from its side file, or undefined when the side file is unusable (not img2dataset's,
 * damaged, or without the captions asked for): the caller then reads the tar itself.
 */
async function sideFileRows(bytes: Buffer, key: string, need: { captions: boolean }): Promise<Img2datasetColumns | undefined> {
  try {
    const parquet = openImg2datasetParquet(bytes, key);
    // Read whole before use (a few MB per 10k-record shard), so a damaged file falls back cleanly.
    return need.captions && !parquet.hasCaptions ? undefined : await parquet.columns();
  } catch (err) {
    if (err instanceof Img2datasetParquetError) return undefined;
    throw err;
  }
}

/**
 * A failed download is a gap img2dataset already knows about, not damage, and real CC3M runs have
 * hundreds of thousands of them: counted by status, not listed one by one.
 */
function failedDownload(sourceId: string, where: string, status: string, errorMessage: string | undefined): SourceProblem {
  const detail = errorMessage ? ` (${errorMessage})` : '';
  return filtered(sourceId, `img2dataset-${status}`, `${where}: img2dataset status "${status}"${detail}`);
}

/** A tar's records from its side file's rows: a row's status tells a sample, built only when asked for. */
function parquetSegment(rows: Img2datasetColumns, tar: string, parquet: string, config: Cc3mSourceConfig, sourceIndex: number): SourceSegment {
  const { keys, statuses, captions, errors } = rows;
  const records: SourceSegment['records'] = [];
  const successes: number[] = [];
  for (let row = 0; row < keys.length; row++) {
    const key = keys[row]!;
    const status = statuses[row]!;
    if (status === 'success') {
      records.push(key);
      successes.push(row);
      continue;
    }
    records.push(failedDownload(key, `${parquet}:${key}`, status, errors?.[row] ?? undefined));
  }
  return lazySegment('cc3m', records, (i) => {
    const row = successes[i]!;
    const key = keys[row]!;
    return sourceSample('cc3m', key, config.licenseNote, { sourceIndex, locator: { tar, record: key } }, { caption: captions?.[row]?.trim() ?? '' });
  });
}

async function* tarRecords(store: ObjectStore, tar: string): AsyncGenerator<Cc3mRecord | SourceProblem> {
  let last: string | undefined;
  try {
    const entries = tarEntries(await store.openRead(tar), tar, {
      capture: ({ path, size }) => isSidecar(path) && size <= MAX_CAPTURED_SIDECAR,
    });
    const members = mapAsync(entries, (e): Member => ({ path: e.path, key: tar, range: [e.offset, e.offset + e.size], data: e.data }));
    for await (const record of groupRecords(members, `${tar}:`)) {
      last = record.sourceId;
      yield record;
    }
  } catch (err) {
    if (!(err instanceof TarError)) throw err;
    // A record the tar broke inside may be missing members, so it counts as lost too.
    const lost = last === undefined ? 'no record in it is readable' : `the records after ${last} are lost`;
    yield damaged(tar, 'tar-unreadable', `${err.message}; ${lost}`);
  }
}

/**
 * Image records kept indexed by one reader, over all its tars (~70 bytes each: 500k is ~35 MB).
 * Shards draw their samples from every tar (selection is by seeded rank), so a small per-tar cap
 * would evict and re-read tars all the time; beyond this the least recently indexed tars go.
 */
const INDEXED_RECORDS = 500_000;
/** Side-file record orders kept by one reader (a key and its ordinal each), bounded the same way. */
const ORDERED_RECORDS = 500_000;

interface TarImages {
  /** Record key -> position in `ranges` (start, end pairs). */
  records: Map<string, number>;
  ranges: Float64Array;
  /** Why records after some point are missing: the tar's damage. */
  damage?: string;
}

/**
 * Byte ranges of the images of webdataset records, by tar. First by seeking (sources/readers/tarSeek.ts) in
 * the record order of the tar's img2dataset side file, read once per tar and reader: a few ranged
 * reads per image. Else, or when seeking fails (a tar not in that order, damage), by reading the
 * tar's headers by range from the start, once per tar and reader (per build and worker), which
 * reads the whole tar when its images are smaller than the 256 KiB window.
 */
class TarImageIndex {
  private readonly indexes = new WeighedCache<TarImages>(INDEXED_RECORDS, (index) => index.records.size);
  private readonly orders = new WeighedCache<TarOrder | undefined>(ORDERED_RECORDS, (order) => order?.count ?? 0);
  /** Tar sizes, a few bytes each: weighed nothing, so never evicted (as many as the tars). */
  private readonly sizes = new WeighedCache<number>(0, () => 0);

  constructor(private readonly store: ObjectStore) {}

  async find(tar: string, record: string): Promise<{ key: string; range: [number, number] }> {
    // Once a tar had to be walked (seeking failed in it), its index answers at once.
    const order = this.indexes.has(tar) ? undefined : await this.orders.get(tar, () => this.sideFileOrder(tar));
    const ordinal = order?.ordinals.get(record);
    if (order && ordinal !== undefined) {
      const isWanted = (path: string) => fileKind(path) === 'image' && recordKey(path) === record;
      const range = await seekTarMember((start, end) => this.store.getRange(tar, start, end), await this.sizeOf(tar), order, { ordinal, isWanted });
      if (range) return { key: tar, range };
    }
    const { records, ranges, damage } = await this.indexes.get(tar, () => this.build(tar));
    const at = records.get(record);
    if (at === undefined) {
      const why = damage ?? "img2dataset's parquet lists it as a success, but the tar does not hold it";
      throw new SourceError(this.store.root, `${tar}: no image for record ${record} (${why})`);
    }
    return { key: tar, range: [ranges[2 * at]!, ranges[2 * at + 1]!] };
  }

  /** The order of the tar's records: its side file's `success` rows (img2dataset writes both in one loop). */
  private async sideFileOrder(tar: string): Promise<TarOrder | undefined> {
    const parquet = sideFileOf(tar);
    const bytes = await this.store.get(parquet);
    const rows = bytes && (await sideFileRows(bytes, parquet, { captions: false }));
    if (!rows) return undefined;
    const ordinals = new Map<string, number>();
    let count = 0;
    rows.keys.forEach((key, row) => {
      if (rows.statuses[row] === 'success' && !ordinals.has(key)) ordinals.set(key, count++);
    });
    return { ordinals, count, recordOf: recordKey };
  }

  private sizeOf(tar: string): Promise<number> {
    return this.sizes.get(tar, async () => {
      for await (const info of this.store.list(tar)) if (info.key === tar) return info.size;
      throw new SourceError(this.store.root, `'${tar}' has disappeared since it was planned`);
    });
  }

  private async build(tar: string): Promise<TarImages> {
    const size = await this.sizeOf(tar);
    const records = new Map<string, number>();
    const ranges: number[] = [];
    let damage: string | undefined;
    try {
      for await (const entry of tarEntriesByRange((start, end) => this.store.getRange(tar, start, end), size, tar)) {
        const record = recordKey(entry.path);
        if (fileKind(entry.path) !== 'image' || records.has(record)) continue;
        records.set(record, records.size);
        ranges.push(entry.offset, entry.offset + entry.size);
      }
    } catch (err) {
      if (!(err instanceof TarError)) throw err;
      damage = err.message;
    }
    return { records, ranges: Float64Array.from(ranges), ...(damage ? { damage } : {}) };
  }
}

/** Values made once per key, kept until their total weight passes `limit` (the earliest made go first). */
class WeighedCache<T> {
  private readonly entries = new Map<string, Promise<T>>();
  private readonly weights = new Map<string, number>();
  /** The sum of `weights`, kept as they change (not re-added at every insert). */
  private total = 0;

  constructor(
    private readonly limit: number,
    private readonly weigh: (value: T) => number,
  ) {}

  has(key: string): boolean {
    return this.entries.has(key);
  }

  get(key: string, make: () => Promise<T>): Promise<T> {
    let entry = this.entries.get(key);
    if (!entry) {
      entry = make().then((value) => {
        const weight = this.weigh(value);
        this.weights.set(key, weight);
        this.total += weight;
        this.evictBeyond(key);
        return value;
      });
      entry.catch(() => this.entries.delete(key));
      this.entries.set(key, entry);
    }
    return entry;
  }

  /** Drops the earliest weighed entries (never `keep`) until the total is within the limit. */
  private evictBeyond(keep: string): void {
    for (const [key, weight] of this.weights) {
      if (this.total <= this.limit) return;
      if (key === keep) continue;
      this.weights.delete(key);
      this.entries.delete(key);
      this.total -= weight;
    }
  }
}

/**
 * Groups adjacent members sharing a key into records. Sorted listings and webdataset tars keep a
 * record's files together, so only one record is held at a time.
 */
async function* groupRecords(members: AsyncIterable<Member>, wherePrefix: string): AsyncGenerator<Cc3mRecord> {
  let current: (Cc3mRecord & { key: string }) | undefined;
  try {
    for await (const member of members) {
      const kind = fileKind(member.path);
      if (!kind) continue;
      const key = recordKey(member.path);
      if (current && current.key !== key) {
        yield current;
        current = undefined;
      }
      current ??= { key, where: wherePrefix + key, sourceId: key.slice(key.lastIndexOf('/') + 1), members: [] };
      current.members.push({ ...member, kind });
    }
  } catch (err) {
    // A tar cut inside the next record's member leaves the current record whole: keep it.
    if (current && err instanceof TarError && err.member !== undefined && recordKey(err.member) !== current.key) yield current;
    throw err;
  }
  if (current) yield current;
}

/** The path up to the first '.' of its file name: `00000/000000003.jpg` -> `00000/000000003`. */
function recordKey(path: string): string {
  const slash = path.lastIndexOf('/');
  return path.slice(0, slash + 1) + path.slice(slash + 1).split('.')[0]!;
}

async function toItem(record: Cc3mRecord, store: ObjectStore, config: Cc3mSourceConfig, sourceIndex: number): Promise<SourceItem> {
  const problem = (code: string, reason: string): SourceProblem => damaged(record.sourceId, code, `${record.where}: ${reason}`);
  const read = (m: Member) => (m.data ? Promise.resolve(m.data) : readStored(store, m));
  const sidecar = record.members.find((m) => m.kind === 'json');
  const text = record.members.find((m) => m.kind === 'txt');
  const images = record.members.filter((m) => m.kind === 'image');
  const unreadable = record.members.find((m) => m.unreadable);
  if (unreadable) return unreadableFile(record.sourceId, unreadable.path, unreadable.unreadable!);

  let meta: Record<string, unknown> = {};
  if (sidecar) {
    const sidecarText = decodeUtf8(await read(sidecar));
    if (sidecarText === undefined) return problem('encoding', encodingReason(sidecar.path));
    const parsed = parseSidecar(sidecarText);
    if (typeof parsed === 'string') return problem('bad-sidecar', `${sidecar.path} ${parsed}`);
    meta = parsed;
    if (meta.status !== undefined && meta.status !== 'success') {
      const errorMessage = typeof meta.error_message === 'string' ? meta.error_message : undefined;
      return failedDownload(record.sourceId, record.where, String(meta.status), errorMessage);
    }
  }
  const image = images[0];
  if (!image) return problem('no-image-member', `no image among ${record.members.map((m) => m.path).join(', ')}`);
  if (images.length > 1) return problem('several-images', `several images: ${images.map((m) => m.path).join(', ')}`);

  const captionText = text ? decodeUtf8(await read(text)) : typeof meta.caption === 'string' ? meta.caption : '';
  if (captionText === undefined) return problem('encoding', encodingReason(`caption ${text!.path}`));
  const caption = captionText.trim();
  const locator: ImageLocator = image.range ? { tar: image.key, member: image.path, range: image.range } : { path: image.key };
  const ref = { sourceIndex, locator };
  return sourceSample('cc3m', record.sourceId, config.licenseNote, ref, { caption });
}

/** The sidecar as an object, or why it is unusable. */
function parseSidecar(text: string): Record<string, unknown> | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return `is not JSON (${(err as Error).message})`;
  }
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : 'is not a JSON object';
}

function fileKind(path: string): 'image' | 'txt' | 'json' | undefined {
  const base = path.slice(path.lastIndexOf('/') + 1);
  if (base.indexOf('.') <= 0) return undefined; // no extension, or a hidden file: no record key
  const ext = base.slice(base.lastIndexOf('.') + 1).toLowerCase();
  if (IMAGE_EXTENSIONS.has(ext)) return 'image';
  return ext === 'txt' || ext === 'json' ? ext : undefined;
}

function isSidecar(path: string): boolean {
  const kind = fileKind(path);
  return kind === 'txt' || kind === 'json';
}

function isRootTar(key: string): boolean {
  return !key.includes('/') && key.toLowerCase().endsWith('.tar');
}

function isInNumberedFolder(key: string): boolean {
  return /^\d+\/[^/]+$/.test(key);
}
