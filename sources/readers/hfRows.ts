/**
 * The rows of a Hugging Face Parquet dataset (hfDataset.ts lists the files), as records for a source
 * type to turn into samples: the mapped columns' values (hfColumns.ts) and an image locator, without
 * reading an image byte. Row groups are read a run at a time (~1k rows); a run that does not
 * decode is read again group by group, so one damaged row group is a source problem naming file and
 * row group and the others are kept. A row's image is `{file, size, rowGroup, row}` when the table
 * holds its bytes, or a path under the root (namedImages.ts: a file, or a zip member) when it holds
 * a path. parquetImages reads either back.
 */
import { SampleRejection } from '../../domain/rejection.js';
import type { ImageLocator } from '../../domain/sample.js';
import type { ObjectStore } from '../../storage/objectStore.js';
import { LruCache } from '../../domain/lruCache.js';
import type { ImageOrigin } from '../../domain/sample.js';
import { damaged, filtered, locatorField, SourceError, type SourceProblem } from '../contract.js';
import { datasetKey } from './datasetPath.js';
import { mapColumns, type ColumnMap, type ColumnRequest } from './hfColumns.js';
import { hfParquetFiles, type HfFileFilter, type HfParquetFile } from './hfDataset.js';
import { openParquetTable, ParquetTableError, readImageCell, readRows, rowGroupOf, type ParquetTable } from './hfParquet.js';
import { namedImages, pathLocator } from './namedImages.js';

export interface ParquetRowRecord {
  file: HfParquetFile;
  /** Row index in the file. */
  row: number;
  /** `<file>#<row>`, with `:<id>` when the mapping has an id column. */
  sourceId: string;
  /** The values of the mapped columns (and `extraColumns`), by column name. */
  values: Record<string, unknown>;
  map: ColumnMap;
  locator: ImageLocator;
}

/**
 * Rows read per run of row groups: enough that hyparquet's per-call cost is small, few enough that a
 * run's values die young (16,384 had the garbage collector copy and promote them: ADR 0071).
 */
const ROWS_PER_RUN = 1_024;

/**
 * A run of row groups as read: its mapped columns, column by column, and each row's record built
 * only when asked for (planning builds the few it keeps: an object per row was most of its cost).
 */
export interface ParquetRun {
  file: HfParquetFile;
  map: ColumnMap;
  /** In order: the file row index of each row read, or the problem of a row group that did not decode. */
  entries: Array<number | SourceProblem>;
  /** The value of a mapped (or extra) column at a row of this run. */
  value(column: string, row: number): unknown;
  /** A row's source id: `<file>#<row>`, with `:<id>` when the mapping has an id column. */
  sourceId(row: number): string;
  /** A row's record, or why its image cannot be read (a path column's null, non-path or outside path). */
  record(row: number): ParquetRowRecord | SourceProblem;
  /** Why a row's image cannot be read, as record() would say, without building the record; undefined when it can. */
  imageProblem(row: number): SourceProblem | undefined;
}

/**
 * Every row of `files`, in order, a run of row groups at a time (no async step per row), with a
 * SourceProblem for what cannot be read. A column asked for that a file does not hold fails the
 * whole source (SourceError, before any row), naming both.
 */
export async function* parquetRuns(
  store: ObjectStore,
  files: readonly HfParquetFile[],
  request: ColumnRequest,
  extraColumns: readonly string[] = [],
): AsyncGenerator<ParquetRun | SourceProblem> {
  for (const file of files) {
    let table: ParquetTable;
    try {
      table = await openParquetTable(store, file.key, file.size);
    } catch (err) {
      if (!(err instanceof ParquetTableError)) throw err;
      yield damaged(file.key, 'parquet-unreadable', err.message);
      continue;
    }
    const map = tableMapping(store, table, request);
    const columns = [...new Set([...mappedColumns(map), ...extraColumns.filter((c) => table.columns.some((t) => t.name === c))])];
    const groups = table.metadata.row_groups.length;
    for (let first = 0; first < groups;) {
      let end = first + 1;
      while (end < groups && table.rowGroupStarts[end + 1]! - table.rowGroupStarts[first]! <= ROWS_PER_RUN) end++;
      yield await readRun(table, file, map, first, end, columns);
      first = end;
    }
  }
}

/** parquetRuns row by row. */
export async function* parquetRows(
  store: ObjectStore,
  files: readonly HfParquetFile[],
  request: ColumnRequest,
  extraColumns: readonly string[] = [],
): AsyncGenerator<ParquetRowRecord | SourceProblem> {
  for await (const run of parquetRuns(store, files, request, extraColumns)) {
    if ('problem' in run) yield run;
    else for (const entry of run.entries) yield typeof entry === 'number' ? run.record(entry) : entry;
  }
}

/** The mapping of one table; a column asked for that it does not hold fails the source. */
export function tableMapping(store: ObjectStore, table: ParquetTable, request: ColumnRequest): ColumnMap {
  try {
    return mapColumns(table, request);
  } catch (err) {
    throw new SourceError(store.root, (err as Error).message);
  }
}

function mappedColumns(map: ColumnMap): string[] {
  const names = [map.question, map.answer, map.id, map.text, map.conversations].filter((c): c is string => c !== undefined);
  return map.image.holds === 'path' ? [map.image.name, ...names] : names;
}

/**
 * Row groups [first, end) in one read, or group by group when they do not decode together, so a
 * damaged row group is a problem naming file and row group and the others are kept.
 */
async function readRun(table: ParquetTable, file: HfParquetFile, map: ColumnMap, first: number, end: number, columns: string[]): Promise<ParquetRun> {
  const starts = table.rowGroupStarts;
  const values: Record<string, unknown[]> = Object.fromEntries(columns.map((c) => [c, new Array<unknown>(starts[end]! - starts[first]!)]));
  const entries: ParquetRun['entries'] = [];
  const rowsOf = (from: number, to: number) => {
    for (let row = starts[from]!; row < starts[to]!; row++) entries.push(row);
  };
  try {
    const all = await readRows(table, first, end, columns);
    for (const c of columns) values[c] = all[c]!;
    rowsOf(first, end);
  } catch (err) {
    if (!(err instanceof ParquetTableError)) throw err;
    for (let group = first; group < end; group++) {
      try {
        const one = await readRows(table, group, group + 1, columns);
        for (const c of columns) one[c]!.forEach((v, i) => (values[c]![starts[group]! - starts[first]! + i] = v));
        rowsOf(group, group + 1);
      } catch (err) {
        if (!(err instanceof ParquetTableError)) throw err;
        entries.push(damaged(`${table.key}#row-group-${group}`, 'parquet-row-group', err.message));
      }
    }
  }
  const value = (column: string, row: number) => values[column]![row - starts[first]!];
  const sourceId = (row: number) => {
    const id = map.id === undefined ? undefined : value(map.id, row);
    return typeof id === 'string' || typeof id === 'number' || typeof id === 'bigint' ? `${file.key}#${row}:${String(id)}` : `${file.key}#${row}`;
  };
  const imageKey = (row: number) => (map.image.holds === 'path' ? pathKey(value(map.image.name, row), map.image.name, () => sourceId(row)) : undefined);
  return {
    file,
    map,
    entries,
    value,
    sourceId,
    record(row) {
      const key = imageKey(row);
      if (typeof key === 'object') return key;
      const locator = key === undefined ? { file: file.key, size: file.size, column: map.image.name, rowGroup: rowGroupOf(table, row), row } : pathLocator(key);
      return { file, row, sourceId: sourceId(row), values: Object.fromEntries(columns.map((c) => [c, value(c, row)])), map, locator };
    },
    imageProblem(row) {
      const key = imageKey(row);
      return typeof key === 'object' ? key : undefined;
    },
  };
}

/** A path cell's key under the root, or why it names no readable image (`sourceIdOf` only asked then). */
function pathKey(path: unknown, column: string, sourceIdOf: () => string): string | SourceProblem {
  const key = typeof path === 'string' && path !== '' ? datasetKey('', path) : undefined;
  if (key !== undefined) return key;
  const sourceId = sourceIdOf();
  if (path === null || path === undefined || path === '') return filtered(sourceId, 'no-image', `${sourceId}: no image path in column '${column}'`);
  if (typeof path !== 'string') return damaged(sourceId, 'image-not-a-path', `${sourceId}: column '${column}' is not a path`);
  return damaged(sourceId, 'outside-root', `${sourceId}: image path '${path}' leaves the dataset root; not read`);
}

/** The files the filter keeps, or SourceError saying what the root holds. */
export async function requireParquetFiles(store: ObjectStore, filter: HfFileFilter): Promise<HfParquetFile[]> {
  const { files, none } = await hfParquetFiles(store, filter);
  if (none) throw new SourceError(store.root, none);
  return files;
}

/** Whether the root holds Parquet files the filter keeps (a Hub layout to fall back on). */
export async function hasParquetFiles(store: ObjectStore, filter: HfFileFilter): Promise<boolean> {
  return (await hfParquetFiles(store, filter)).files.length > 0;
}

/** A list cell's first string (ChartQA's `label`, RICO's `captions`), a string as is, else undefined. */
export function firstText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.find((v): v is string => typeof v === 'string');
  return undefined;
}

export interface ParquetImages {
  read(locator: ImageLocator): Promise<Buffer>;
  origin(locator: ImageLocator): ImageOrigin;
}

/** Reads the images of the locators parquetRows made: a row's cell, or a path under the root. */
export function parquetImages(store: ObjectStore): ParquetImages {
  const named = namedImages(store);
  const tables = new LruCache<Promise<ParquetTable>>(16);
  const tableOf = (file: string, size: number) => {
    const opening = tables.get(file, () => openParquetTable(store, file, size));
    opening.catch(() => tables.deleteIf(file, opening));
    return opening;
  };
  return {
    async read(locator) {
      if (!('row' in locator)) return named.read(locator);
      const file = locatorField(locator, 'file', 'string');
      const [group, row] = [locatorField(locator, 'rowGroup', 'number'), locatorField(locator, 'row', 'number')];
      const where = `${file} row ${row} (row group ${group})`;
      let bytes: Buffer | null;
      try {
        const table = await tableOf(file, locatorField(locator, 'size', 'number'));
        bytes = await readImageCell(store, table, locatorField(locator, 'column', 'string'), row);
      } catch (err) {
        if (err instanceof ParquetTableError) throw new SampleRejection(`corrupt: ${where}: ${err.message}`);
        throw err;
      }
      if (!bytes) throw new SampleRejection(`null-image: ${where}: the image cell is null`);
      return bytes;
    },
    origin: (locator) =>
      'row' in locator
        ? { file: locatorField(locator, 'file', 'string'), member: `row ${locatorField(locator, 'row', 'number')} (row group ${locatorField(locator, 'rowGroup', 'number')})` }
        : named.origin(locator),
  };
}
