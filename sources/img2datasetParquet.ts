/**
 * img2dataset's per-shard `.parquet` side file (`00000.parquet` beside `00000.tar`): one row per URL
 * of the shard, successes and failures alike, with columns `key`, `status` (`success`,
 * `failed_to_download`, `failed_to_resize`), `error_message`, `caption` (when the download had a
 * caption column), `url`, `width`, `height`... (img2dataset `writer.py` writes the sample's meta dict
 * through pyarrow; failed downloads appear ONLY here and in `_stats.json`, never in the tar.)
 * Planning reads these instead of the tars: a few MB per shard instead of the images.
 */
import parquet from 'parquetjs-lite';
import codecs from 'parquetjs-lite/lib/codec/index.js';
import { ParquetEnvelopeReader } from 'parquetjs-lite/lib/reader.js';

export interface Img2datasetRow {
  key: string;
  status: string;
  caption?: string;
  errorMessage?: string;
}

// pyarrow writes format version 2 files whose data pages are RLE_DICTIONARY encoded. parquetjs-lite
// knows that encoding under its format-1 name, PLAIN_DICTIONARY (the same bytes in data pages), and
// refuses any version but 1 although it reads the rest; so alias the codec and read the footer
// ourselves. Checked against pyarrow-written files in test/unit/img2datasetParquet.test.ts.
codecs.RLE_DICTIONARY ??= codecs.PLAIN_DICTIONARY;

export class Img2datasetParquetError extends Error {
  override name = 'Img2datasetParquetError';
}

export interface Img2datasetParquet {
  /** Without a caption column, captions live only in the tar's `.txt` members. */
  hasCaptions: boolean;
  /** The rows, in file order; throws Img2datasetParquetError on a damaged row group. */
  rows(): AsyncGenerator<Img2datasetRow>;
}

/** Opens one side file. Throws Img2datasetParquetError when it is not a usable img2dataset parquet. */
export async function openImg2datasetParquet(bytes: Buffer, name: string): Promise<Img2datasetParquet> {
  let envelope: ParquetEnvelopeReader;
  let columns: Set<string>;
  let reader: InstanceType<typeof parquet.ParquetReader>;
  try {
    envelope = await ParquetEnvelopeReader.openBuffer(bytes);
    await envelope.readHeader();
    const metadata = await envelope.readFooter();
    columns = new Set(metadata.schema.map((field) => field.name));
    reader = new parquet.ParquetReader({ ...metadata, version: 1 }, envelope);
  } catch (err) {
    throw new Img2datasetParquetError(`${name} is not a readable Parquet file: ${describe(err)}`);
  }
  for (const required of ['key', 'status']) {
    if (!columns.has(required)) throw new Img2datasetParquetError(`${name} has no '${required}' column: not an img2dataset side file`);
  }
  const wanted = ['key', 'status', 'caption', 'error_message'].filter((c) => columns.has(c));
  return { hasCaptions: columns.has('caption'), rows: () => rowsOf(reader.getCursor(wanted.map((c) => [c])), name) };
}

async function* rowsOf(cursor: { next(): Promise<Record<string, unknown> | null> }, name: string): AsyncGenerator<Img2datasetRow> {
  for (let index = 0; ; index++) {
    let row: Record<string, unknown> | null;
    try {
      row = await cursor.next();
    } catch (err) {
      throw new Img2datasetParquetError(`${name} is damaged after row ${index}: ${describe(err)}`);
    }
    if (!row) return;
    if (typeof row.key !== 'string' || typeof row.status !== 'string') {
      throw new Img2datasetParquetError(`${name} row ${index}: key and status must be strings, got ${JSON.stringify([row.key, row.status])}`);
    }
    yield {
      key: row.key,
      status: row.status,
      ...(typeof row.caption === 'string' ? { caption: row.caption } : {}),
      ...(typeof row.error_message === 'string' ? { errorMessage: row.error_message } : {}),
    };
  }
}

/** parquetjs-lite throws strings as well as Errors. */
function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
