/**
 * img2dataset's per-shard `.parquet` side file (`00000.parquet` beside `00000.tar`): one row per URL,
 * successes and failures alike, with `key`, `status` (`success`, `failed_to_download`,
 * `failed_to_resize`), `error_message`, `caption`, `url`, `width`, `height`... (img2dataset
 * `writer.py`; failed downloads appear only here and in `_stats.json`). Planning reads these instead
 * of the tars, and only four columns. Decoded by hyparquet (https://github.com/hyparam/hyparquet) with
 * hyparquet-compressors for every codec pyarrow writes: img2dataset leaves pyarrow's default
 * (snappy), but a re-written dataset may use ZSTD.
 */
import { parquetMetadata, parquetRead, parquetSchema, type FileMetaData } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { RecordError } from '../../domain/errors.js';

/** Every row of a side file, in file order, as columns (row i is index i of each): no object per row. */
export interface Img2datasetColumns {
  keys: string[];
  statuses: string[];
  /** Absent without the column; null where a row has no value. */
  captions?: Array<string | null>;
  errors?: Array<string | null>;
}

export class Img2datasetParquetError extends RecordError {
  override name = 'Img2datasetParquetError';
}

export interface Img2datasetParquet {
  /** Without a caption column, captions live only in the tar's `.txt` members. */
  hasCaptions: boolean;
  /** Every row; rejects with Img2datasetParquetError on a damaged row group. */
  columns(): Promise<Img2datasetColumns>;
}

/** Opens one side file. Throws Img2datasetParquetError when it is not a usable img2dataset parquet. */
export function openImg2datasetParquet(bytes: Buffer, name: string): Img2datasetParquet {
  // hyparquet reads an ArrayBuffer; a Buffer may be a view into a larger pooled one.
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  let metadata: FileMetaData;
  let names: Set<string>;
  try {
    metadata = parquetMetadata(file);
    names = new Set(parquetSchema(metadata).children.map((child) => child.element.name));
  } catch (err) {
    throw new Img2datasetParquetError(`${name} is not a readable Parquet file: ${messageOf(err)}`);
  }
  for (const required of ['key', 'status']) {
    if (!names.has(required)) throw new Img2datasetParquetError(`${name} has no '${required}' column: not an img2dataset side file`);
  }
  const hasCaptions = names.has('caption');
  const hasErrors = names.has('error_message');
  return { hasCaptions, columns: () => columnsOf(file, metadata, name, hasCaptions, hasErrors) };
}

async function columnsOf(file: ArrayBuffer, metadata: FileMetaData, name: string, hasCaptions: boolean, hasErrors: boolean): Promise<Img2datasetColumns> {
  const wanted = ['key', 'status', ...(hasCaptions ? ['caption'] : []), ...(hasErrors ? ['error_message'] : [])];
  const rowCount = Number(metadata.num_rows);
  // Decoded column by column (onChunk), no row arrays: chunks arrive per row group and page.
  const cells = new Map(wanted.map((column) => [column, new Array<unknown>(rowCount)]));
  let decoded = 0;
  try {
    await parquetRead({
      file,
      metadata,
      columns: wanted,
      compressors,
      onChunk: ({ columnName, columnData, rowStart }) => {
        const into = cells.get(columnName)!;
        for (let i = 0; i < columnData.length; i++) into[rowStart + i] = columnData[i];
        decoded += columnData.length;
      },
    });
  } catch (err) {
    throw new Img2datasetParquetError(`${name} is damaged after row ${await rowsReadable(file, metadata, wanted)}: ${messageOf(err)}`);
  }
  if (decoded !== rowCount * wanted.length)
    throw new Img2datasetParquetError(`${name} is damaged: ${decoded} values decoded where ${wanted.length} columns of ${rowCount} rows were expected`);
  const [keys, statuses, captions, errors] = [cells.get('key')!, cells.get('status')!, cells.get('caption'), cells.get('error_message')];
  for (let i = 0; i < rowCount; i++) {
    if (typeof keys[i] !== 'string' || typeof statuses[i] !== 'string') {
      throw new Img2datasetParquetError(`${name} row ${i}: key and status must be strings, got ${JSON.stringify([keys[i], statuses[i]])}`);
    }
  }
  return {
    keys: keys as string[],
    statuses: statuses as string[],
    ...(captions ? { captions: captions.map(text) } : {}),
    ...(errors ? { errors: errors.map(text) } : {}),
  };
}

/** The rows of the row groups before the first one that does not decode (to say where damage starts). */
async function rowsReadable(file: ArrayBuffer, metadata: FileMetaData, columns: string[]): Promise<number> {
  let rowStart = 0;
  for (const group of metadata.row_groups) {
    const rowEnd = rowStart + Number(group.num_rows);
    try {
      await parquetRead({ file, metadata, columns, rowStart, rowEnd, compressors, onChunk: () => {} });
    } catch {
      return rowStart;
    }
    rowStart = rowEnd;
  }
  return rowStart;
}

/** A string cell, or null (a null, or a value of another type: a column img2dataset did not write). */
const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));
