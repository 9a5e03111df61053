/**
 * The one storage abstraction of the project. Output shards, per-sample stage state, the model-call
 * cache and (read-only) source datasets all go through it, so a local folder and S3 behave the same.
 * Keys are '/'-separated and relative to the store's root.
 */
import { TransientError } from '../domain/errors.js';
/**
 * The folder at a source's root holding what its gzip'd tars unpack to (sources/readers/tarGzExtraction.ts).
 * A listing never descends into it, nor lists an object of that name, unless its prefix is inside it:
 * a root's listing does not pay for the unpacked members it would drop (ADR 0079).
 */
export const EXTRACTION_CACHE = '.mmif-extracted';

/** Whether a listing of `prefix` leaves `key` out: the key is the extraction cache or inside it, and the prefix is not. */
export const listingSkips = (prefix: string, key: string): boolean => !prefix.startsWith(EXTRACTION_CACHE) && (key === EXTRACTION_CACHE || key.startsWith(`${EXTRACTION_CACHE}/`));

/** ObjectInfo.unreadable of a local directory named like a file. */
export const NOT_A_FILE = 'a directory, not a file';

export interface ObjectInfo {
  key: string;
  size: number;
  /**
   * Set when the object is listed but cannot be read, saying why: a local file whose name is not valid
   * UTF-8 (Node lists it with U+FFFD, a name no open() finds) or that the OS cannot stat, or a local
   * directory named like a file (`x.jpg/`: listed once as such, then walked). Readers that list their
   * dataset report it as a problem of that file alone; others skip it.
   */
  unreadable?: string;
}

export interface ObjectStore {
  /** Human-readable root, e.g. `/data/out` or `s3://bucket/prefix`; used in messages. */
  readonly root: string;
  /** The address of a store reached over the network (S3's endpoint), for messages; none for local disk. */
  readonly endpoint?: string;
  get(key: string): Promise<Buffer | undefined>;
  /** Bytes [start, end) of an object; used to read one tar member without streaming the whole tar. */
  getRange(key: string, start: number, end: number): Promise<Buffer>;
  /** Streams an object; for sources too large to buffer (tars, 500k-record JSON arrays). */
  openRead(key: string): Promise<NodeJS.ReadableStream>;
  /** Writes atomically: a reader sees the old object or the whole new one, never a partial one. */
  put(key: string, body: Buffer | string, contentType?: string): Promise<void>;
  /**
   * Writes an object that is usually new, at less cost than put where that matters: a local file is
   * created in place (no temp file, no rename). An object already there is replaced atomically, as
   * by put. But a crash while creating may leave the new object torn (cut or empty), and a reader
   * racing the creation may see it so: write with createJson and read with getCreatedJson, which
   * takes a torn object for an absent one (its writer's retry then writes it whole). S3 writes
   * atomically anyway: there it is put.
   */
  create(key: string, body: Buffer | string, contentType?: string): Promise<void>;
  /** Writes only if the key does not exist yet; returns false when it already existed. */
  putIfAbsent(key: string, body: Buffer | string, contentType?: string): Promise<boolean>;
  exists(key: string): Promise<boolean>;
  /**
   * Adds one line (no newline in it) to the append-only log `key`, which any number of writers may
   * share; a line is written whole or not at all. A local file is appended to (no new file per
   * line: creating files was the largest cost of a worker's small per-call writes); S3, which has
   * no append, stores each line as an object of its own under `<key>/`. Read with readLines.
   */
  appendLine(key: string, line: string): Promise<void>;
  /** The lines of log `key` (appendLine), oldest first for one writer; [] when there is none. */
  readLines(key: string): Promise<string[]>;
  /** Every object under a prefix, in lexicographic key order; the extraction cache only when the prefix is inside it (EXTRACTION_CACHE). */
  list(prefix: string): AsyncIterable<ObjectInfo>;
  delete(key: string): Promise<void>;
  /**
   * Removes what interrupted writes left under `prefix` and returns their keys: a local put's temp
   * file (`<key>.tmp-<pid>-<hex>`) whose process died before its rename. A failed write removes its
   * own; S3 writes leave nothing behind. Call it when no write under `prefix` can still be running
   * (a build's finalize: every shard has ended), or it takes an in-flight write's file.
   */
  sweepIncompleteWrites(prefix: string): Promise<string[]>;
}

export class StoreError extends TransientError {
  constructor(
    message: string,
    readonly key: string,
    readonly code: 'not-found' | 'escapes-root' | 'io',
  ) {
    super(message);
    this.name = 'StoreError';
  }
}

export async function getJson<T>(store: ObjectStore, key: string): Promise<T | undefined> {
  const body = await store.get(key);
  return body === undefined ? undefined : (JSON.parse(body.toString('utf8')) as T);
}

export async function putJson(store: ObjectStore, key: string, value: unknown): Promise<void> {
  await store.put(key, JSON.stringify(value), 'application/json');
}

/**
 * A JSON object written with ObjectStore.create, for keys written once per piece of work (a model
 * call's cache entry, a stage's state for a sample); read it with getCreatedJson.
 */
export async function createJson(store: ObjectStore, key: string, value: object): Promise<void> {
  await store.create(key, JSON.stringify(value), 'application/json');
}

/**
 * A JSON object written by createJson, or undefined when absent or torn. Torn cannot pass for
 * whole: no cut (or NUL-filled) text of a JSON object parses.
 */
export async function getCreatedJson<T extends object>(store: ObjectStore, key: string): Promise<T | undefined> {
  try {
    return await getJson<T>(store, key);
  } catch (err) {
    if (err instanceof SyntaxError) return undefined;
    throw err;
  }
}

/** Writes only when the stored bytes differ: a re-run that changes nothing writes nothing. */
export async function putIfChanged(store: ObjectStore, key: string, body: string, contentType?: string): Promise<boolean> {
  const existing = await store.get(key);
  if (existing?.equals(Buffer.from(body))) return false;
  await store.put(key, body, contentType);
  return true;
}
