/**
 * img2dataset's per-shard `.parquet` side file (`00000.parquet` beside `00000.tar`): one row per URL
 * of the shard, successes and failures alike, with columns `key`, `status` (`success`,
 * `failed_to_download`, `failed_to_resize`), `error_message`, `caption` (when the download had a
 * caption column), `url`, `width`, `height`... (img2dataset `writer.py` writes the sample's meta dict
 * through pyarrow; failed downloads appear ONLY here and in `_stats.json`, never in the tar.)
 * Planning reads these instead of the tars: a few MB per shard instead of the images, and of them
 * only the four columns below (sources/parquetStrings.ts).
 */
import { ParquetStringsError, readFooter, readStrings, type ParquetFooter } from './parquetStrings.js';

/** Every row of a side file, in file order, as columns (row i is index i of each): no object per row. */
export interface Img2datasetColumns {
  keys: string[];
  statuses: string[];
  /** Absent without the column; null where a row has no value. */
  captions?: Array<string | null>;
  errors?: Array<string | null>;
}

export class Img2datasetParquetError extends Error {
  override name = 'Img2datasetParquetError';
}

export interface Img2datasetParquet {
  /** Without a caption column, captions live only in the tar's `.txt` members. */
  hasCaptions: boolean;
  /** Every row; throws Img2datasetParquetError on a damaged row group. */
  columns(): Img2datasetColumns;
}

/** Opens one side file. Throws Img2datasetParquetError when it is not a usable img2dataset parquet. */
export function openImg2datasetParquet(bytes: Buffer, name: string): Img2datasetParquet {
  let footer: ParquetFooter;
  try {
    footer = readFooter(bytes);
  } catch (err) {
    throw new Img2datasetParquetError(`${name} is not a readable Parquet file: ${(err as Error).message}`);
  }
  for (const required of ['key', 'status']) {
    if (!footer.columns.has(required)) throw new Img2datasetParquetError(`${name} has no '${required}' column: not an img2dataset side file`);
  }
  const hasCaptions = footer.columns.has('caption');
  const hasErrors = footer.columns.has('error_message');
  return { hasCaptions, columns: () => columnsOf(bytes, footer, name, hasCaptions, hasErrors) };
}

function columnsOf(bytes: Buffer, footer: ParquetFooter, name: string, hasCaptions: boolean, hasErrors: boolean): Img2datasetColumns {
  const all: Img2datasetColumns = { keys: [], statuses: [], ...(hasCaptions ? { captions: [] } : {}), ...(hasErrors ? { errors: [] } : {}) };
  for (let group = 0; group < footer.rowGroups.length; group++) {
    const rowsBefore = all.keys.length;
    const column = (c: string): Array<string | null> => {
      try {
        return readStrings(bytes, footer, group, c);
      } catch (err) {
        if (!(err instanceof ParquetStringsError)) throw err;
        throw new Img2datasetParquetError(`${name} is damaged after row ${rowsBefore}: ${err.message}`);
      }
    };
    const keys = column('key');
    const statuses = column('status');
    const captions = hasCaptions ? column('caption') : undefined;
    const errors = hasErrors ? column('error_message') : undefined;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      const status = statuses[i];
      if (typeof key !== 'string' || typeof status !== 'string') {
        throw new Img2datasetParquetError(`${name} row ${rowsBefore + i}: key and status must be strings, got ${JSON.stringify([key, status])}`);
      }
      all.keys.push(key);
      all.statuses.push(status);
      all.captions?.push(captions![i] ?? null);
      all.errors?.push(errors![i] ?? null);
    }
  }
  return all;
}
