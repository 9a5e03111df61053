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

export interface Img2datasetRow {
  key: string;
  status: string;
  caption?: string;
  errorMessage?: string;
}

export class Img2datasetParquetError extends Error {
  override name = 'Img2datasetParquetError';
}

export interface Img2datasetParquet {
  /** Without a caption column, captions live only in the tar's `.txt` members. */
  hasCaptions: boolean;
  /** Every row, in file order; throws Img2datasetParquetError on a damaged row group. */
  rows(): Img2datasetRow[];
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
  return { hasCaptions, rows: () => rowsOf(bytes, footer, name, hasCaptions, hasErrors) };
}

function rowsOf(bytes: Buffer, footer: ParquetFooter, name: string, hasCaptions: boolean, hasErrors: boolean): Img2datasetRow[] {
  const rows: Img2datasetRow[] = [];
  for (let group = 0; group < footer.rowGroups.length; group++) {
    const column = (c: string): Array<string | null> => {
      try {
        return readStrings(bytes, footer, group, c);
      } catch (err) {
        if (!(err instanceof ParquetStringsError)) throw err;
        throw new Img2datasetParquetError(`${name} is damaged after row ${rows.length}: ${err.message}`);
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
        throw new Img2datasetParquetError(`${name} row ${rows.length}: key and status must be strings, got ${JSON.stringify([key, status])}`);
      }
      const row: Img2datasetRow = { key, status };
      const caption = captions?.[i];
      if (typeof caption === 'string') row.caption = caption;
      const error = errors?.[i];
      if (typeof error === 'string') row.errorMessage = error;
      rows.push(row);
    }
  }
  return rows;
}
