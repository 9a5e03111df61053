/**
 * A Parquet table as Hugging Face `datasets` writes it (`Dataset.to_parquet`, the Hub's
 * `data/<split>-NNNNN-of-NNNNN.parquet`), read with hyparquet through the ObjectStore's ranged reads:
 * the footer once, then per row group only the small columns a plan needs; image bytes only when a
 * shard reads its rows (once per row group and worker: images are inline). Column kinds follow the
 * schema `datasets` writes (an `Image` feature is `{bytes: binary, path: string}`, `Sequence` a
 * Parquet LIST, LLaVA `conversations` a LIST of `{from, value}`) and its `huggingface` metadata
 * (`{"info": {"features": {...}}}`), which names `Image` columns where a struct alone is ambiguous.
 */
import { parquetMetadataAsync, parquetRead, parquetSchema, type AsyncBuffer, type FileMetaData } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { RecordError } from '../../domain/errors.js';
import { LruCache } from '../../domain/lruCache.js';
import type { ObjectStore } from '../../storage/objectStore.js';

/** What a column holds, as far as reading records is concerned. */
export type ColumnKind = 'image-struct' | 'binary' | 'string' | 'string-list' | 'conversations' | 'number' | 'other';

export interface ParquetColumn {
  name: string;
  kind: ColumnKind;
  /** The `datasets` feature type (`Image`, `Value`, `ClassLabel`, `List`...) from the file's `huggingface` metadata. */
  feature?: string;
}

/** A damaged file or row group: the rest of the dataset is still read. */
export class ParquetTableError extends RecordError {
  override name = 'ParquetTableError';
}

export interface ParquetTable {
  key: string;
  size: number;
  metadata: FileMetaData;
  columns: ParquetColumn[];
  /** First row of each row group, and the row count at the end: rowGroupStarts[i]..rowGroupStarts[i+1]. */
  rowGroupStarts: number[];
  file: AsyncBuffer;
}

/** The store's object as hyparquet's AsyncBuffer: every slice a ranged read. `onRead` counts them (benchmark, tests). */
export function storeBuffer(store: ObjectStore, key: string, size: number, onRead?: (bytes: number) => void): AsyncBuffer {
  return {
    byteLength: size,
    slice: async (start: number, end?: number) => {
      const stop = end ?? size;
      const bytes = await store.getRange(key, start, stop);
      onRead?.(bytes.length);
      if (bytes.length !== stop - start) throw new ParquetTableError(`${key} ends before byte ${stop}: the file is truncated or changed since it was listed`);
      return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
    },
  };
}

/** Reads the footer of `key` and classifies its columns. Throws ParquetTableError when it is not a readable Parquet file. */
export async function openParquetTable(store: ObjectStore, key: string, size: number, onRead?: (bytes: number) => void): Promise<ParquetTable> {
  const file = storeBuffer(store, key, size, onRead);
  let metadata: FileMetaData;
  try {
    metadata = await parquetMetadataAsync(file);
  } catch (err) {
    if (err instanceof ParquetTableError) throw err;
    throw new ParquetTableError(`${key} is not a readable Parquet file: ${(err as Error).message}`);
  }
  const features = hfFeatures(metadata);
  const columns = parquetSchema(metadata).children.map((node): ParquetColumn => {
    const feature = features[node.element.name];
    return { name: node.element.name, kind: kindOf(node), ...(feature ? { feature } : {}) };
  });
  const rowGroupStarts = [0];
  for (const group of metadata.row_groups) rowGroupStarts.push(rowGroupStarts.at(-1)! + Number(group.num_rows));
  return { key, size, metadata, columns, rowGroupStarts, file };
}

type SchemaNode = ReturnType<typeof parquetSchema>;

function kindOf(node: SchemaNode): ColumnKind {
  const { element, children } = node;
  if (children.length === 0) {
    if (element.type === 'BYTE_ARRAY' || element.type === 'FIXED_LEN_BYTE_ARRAY') return isString(node) ? 'string' : 'binary';
    if (element.type === 'BOOLEAN') return 'other';
    return 'number';
  }
  const names = new Set(children.map((c) => c.element.name));
  if (names.has('bytes') && names.has('path') && children.length === 2) return 'image-struct';
  if (element.converted_type === 'LIST' || element.logical_type?.type === 'LIST') {
    const item = children[0]?.children[0] ?? children[0];
    if (!item) return 'other';
    if (item.children.length === 0) return isString(item) ? 'string-list' : 'other';
    const fields = new Set(item.children.map((c) => c.element.name));
    if (fields.has('from') && fields.has('value')) return 'conversations';
  }
  return 'other';
}

function isString(node: SchemaNode): boolean {
  return node.element.converted_type === 'UTF8' || node.element.logical_type?.type === 'STRING';
}

/** The `_type` of each top-level feature in the `huggingface` metadata, {} without it. */
function hfFeatures(metadata: FileMetaData): Record<string, string> {
  const raw = metadata.key_value_metadata?.find((kv) => kv.key === 'huggingface')?.value;
  if (!raw) return {};
  try {
    const features = (JSON.parse(raw) as { info?: { features?: Record<string, { _type?: string }> } }).info?.features ?? {};
    return Object.fromEntries(Object.entries(features).flatMap(([name, f]) => (typeof f?._type === 'string' ? [[name, f._type]] : [])));
  } catch {
    return {};
  }
}

/** The row group holding `row` (an index into the whole file). */
export function rowGroupOf(table: ParquetTable, row: number): number {
  return lastAtOrBefore(table.rowGroupStarts, row, table.rowGroupStarts.length - 2);
}

/** The last index in [0, hi] of ascending `starts` whose value is at most `value` (0 when none is). */
function lastAtOrBefore(starts: readonly number[], value: number, hi = starts.length - 1): number {
  let lo = 0;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= value) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * The named columns of row groups [first, end), column by column (lists as arrays, structs as
 * objects, strings decoded): `columns[name][i]` is row `rowGroupStarts[first] + i`'s. Read in one
 * pass (hyparquet's onChunk, no object per row): a row group at a time cost twice the CPU per row on
 * a 1M-row table of 100-row groups. Throws ParquetTableError naming the file and row groups when
 * they do not decode (readRows over each group alone then tells which).
 */
export async function readRows(table: ParquetTable, first: number, end: number, columns: readonly string[]): Promise<Record<string, unknown[]>> {
  const [rowStart, rowEnd] = [table.rowGroupStarts[first]!, table.rowGroupStarts[end]!];
  const out: Record<string, unknown[]> = Object.fromEntries(columns.map((c) => [c, new Array<unknown>(rowEnd - rowStart)]));
  let decoded = 0;
  const where = end - first === 1 ? `row group ${first}` : `row groups ${first}-${end - 1}`;
  // hyparquet plans over every row group of the metadata it is given: given the file's, a run of a
  // 10,000-group file walked all 10,000 (ADR 0071). Given the run's groups, rows count from the run's first.
  const metadata = { ...table.metadata, row_groups: table.metadata.row_groups.slice(first, end), num_rows: BigInt(rowEnd - rowStart) };
  try {
    await parquetRead({
      file: await columnChunks(table, first, end, columns),
      metadata,
      columns: [...columns],
      compressors,
      onChunk: ({ columnName, columnData, rowStart: at }) => {
        const into = out[columnName]!;
        for (let i = 0; i < columnData.length; i++) into[at + i] = columnData[i];
        decoded += columnData.length;
      },
    });
  } catch (err) {
    if (err instanceof ParquetTableError) throw err;
    throw new ParquetTableError(`${table.key} ${where} (rows ${rowStart}-${rowEnd - 1}) does not decode: ${(err as Error).message}`);
  }
  if (decoded !== (rowEnd - rowStart) * columns.length) {
    throw new ParquetTableError(`${table.key} ${where}: ${decoded} values decoded where ${columns.length} columns of ${rowEnd - rowStart} rows were expected`);
  }
  return out;
}

/** Unrequested bytes a read of several column chunks spans (hyparquet's own limit inside a row group, Arrow's hole_size_limit). */
const CHUNK_GAP = 8192;

/**
 * The named columns' chunks of row groups [first, end), read in as few ranged reads as they allow:
 * hyparquet joins the chunks of a row group, but the last chunk of one group and the first of the
 * next, often adjacent, are two reads (half the reads of a run of small row groups). Served from
 * memory; anything else falls through to the file.
 */
async function columnChunks(table: ParquetTable, first: number, end: number, columns: readonly string[]): Promise<AsyncBuffer> {
  const ranges: Array<[number, number]> = [];
  for (let group = first; group < end; group++) {
    for (const chunk of table.metadata.row_groups[group]!.columns) {
      const meta = chunk.meta_data;
      if (!meta || chunk.file_path || !columns.includes(meta.path_in_schema[0]!)) continue;
      const start = Number(meta.dictionary_page_offset || meta.data_page_offset);
      ranges.push([start, start + Number(meta.total_compressed_size)]);
    }
  }
  ranges.sort((a, b) => a[0] - b[0]);
  const joined: Array<[number, number]> = [];
  for (const [start, stop] of ranges) {
    const last = joined.at(-1);
    if (last && start - last[1] <= CHUNK_GAP) last[1] = Math.max(last[1], stop);
    else joined.push([start, stop]);
  }
  const read = await Promise.all(joined.map(([start, stop]) => table.file.slice(start, stop)));
  const starts = joined.map(([start]) => start);
  return {
    byteLength: table.file.byteLength,
    slice(start: number, stop = table.file.byteLength) {
      const at = lastAtOrBefore(starts, start);
      const range = joined[at];
      if (!range || range[0] > start || stop > range[1]) return table.file.slice(start, stop);
      return (read[at] as ArrayBuffer).slice(start - range[0], stop - range[0]);
    },
  };
}

/** The image column of one row group, bytes per row (null where the cell is null). */
async function readImageColumn(table: ParquetTable, group: number, column: string): Promise<Array<Uint8Array | null>> {
  const [rowStart, rowEnd] = [table.rowGroupStarts[group]!, table.rowGroupStarts[group + 1]!];
  const cells: Array<Uint8Array | null> = [];
  try {
    await parquetRead({
      file: table.file,
      metadata: table.metadata,
      columns: [column],
      rowStart,
      rowEnd,
      compressors,
      utf8: false,
      useOffsetIndex: true,
      rowFormat: 'object',
      onComplete: (rows) => {
        for (const row of rows) cells.push(imageBytes(row[column]));
      },
    });
  } catch (err) {
    if (err instanceof ParquetTableError) throw err;
    throw new ParquetTableError(`${table.key} row group ${group} (rows ${rowStart}-${rowEnd - 1}): column '${column}' does not decode: ${(err as Error).message}`);
  }
  return cells;
}

function imageBytes(cell: unknown): Uint8Array | null {
  if (cell instanceof Uint8Array) return cell;
  if (cell && typeof cell === 'object' && (cell as { bytes?: unknown }).bytes instanceof Uint8Array) return (cell as { bytes: Uint8Array }).bytes;
  return null;
}

/** Row groups' image columns a worker holds (a shard's rows cluster by row group only by chance: kept few). */
const imageColumns = new LruCache<Promise<Array<Uint8Array | null>>>(4);

/**
 * The image bytes of row `row` of the file: its row group's image column is read once and kept for
 * the next rows of the same group. Null for a null cell (or a struct without bytes).
 */
export async function readImageCell(store: ObjectStore, table: ParquetTable, column: string, row: number): Promise<Buffer | null> {
  const group = rowGroupOf(table, row);
  const cacheKey = `${store.root}\u0000${table.key}\u0000${group}\u0000${column}`;
  const reading = imageColumns.get(cacheKey, () => readImageColumn(table, group, column));
  reading.catch(() => imageColumns.deleteIf(cacheKey, reading));
  const cell = (await reading)[row - table.rowGroupStarts[group]!];
  return cell ? Buffer.from(cell.buffer, cell.byteOffset, cell.byteLength) : null;
}
