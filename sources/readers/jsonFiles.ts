/**
 * JSON files inside a dataset root (ALLaVA, ChartQA, Geo170K, MultiUI, LLaVA, ImageFolder metadata):
 * checking that the layout's files are there, and streaming each file's records, from one JSON array
 * or from JSON lines (`.jsonl`, one value a line, https://jsonlines.org), with damage reported per
 * record.
 */
import { StoreError, type ObjectStore } from '../../storage/objectStore.js';
import { SourceError, damaged, type DamagedUnit } from '../contract.js';
import { JsonArrayError, jsonArrayElements } from './jsonArrayStream.js';
import { decodeUtf8, encodingReason } from './utf8.js';

export interface JsonRecord {
  file: string;
  /** Position in the file's array, from 0. */
  index: number;
  value: unknown;
}

/**
 * Fails fast, before any sample is yielded, when a file the layout needs is missing: a build should
 * not stream half a million records of one file and then stop on the next.
 * `expected` describes the layout for the message.
 */
export async function requireFiles(store: ObjectStore, files: readonly string[], expected: string): Promise<void> {
  const present = await Promise.all(files.map((file) => store.exists(file)));
  const missing = files.filter((_, i) => !present[i]);
  if (missing.length === 0) return;
  throw new SourceError(store.root, `${missing.map((f) => `'${f}'`).join(', ')} not found (${await describeRoot(store)}); ${expected}`);
}

/**
 * What the root holds, for error messages: a wrong uri and a wrong layout call for different fixes.
 * `layoutFiles` (the layout's files, relative to the root): a root holding one of them by its bare
 * name is that file's own folder, one too deep (`.../allava_laion`, `.../ChartQA Dataset/train`), and
 * the message names the folder to point `uri` at. Each probe is one existence check, never a listing.
 */
export async function describeRoot(store: ObjectStore, layoutFiles: readonly string[] = []): Promise<string> {
  for (const file of layoutFiles) {
    const slash = file.lastIndexOf('/');
    if (slash < 0 || !(await store.exists(file.slice(slash + 1)))) continue;
    return `the root holds '${file.slice(slash + 1)}', which the layout expects at '${file}': point uri at the folder that holds '${file.slice(0, slash)}/'`;
  }
  for await (const { key } of store.list('')) return `the root holds other files, e.g. '${key}'`;
  return 'the root is missing or empty';
}

/**
 * The elements of one JSON array file, in order. A malformed element or a truncated end becomes a
 * damaged unit named `<file>#<index>`; a file that is not a JSON array at all is a layout error.
 */
export async function* jsonFileRecords(store: ObjectStore, file: string, expected: string): AsyncGenerator<JsonRecord | DamagedUnit> {
  const stream = await openLayoutFile(store, file, expected);
  try {
    for await (const item of jsonArrayElements(stream as AsyncIterable<Buffer>)) {
      if ('error' in item) yield damaged(`${file}#${item.index}`, item.code, `${file}: element #${item.index} at byte ${item.offset}: ${item.error}`);
      else yield { file, index: item.index, value: item.value };
    }
  } catch (err) {
    if (err instanceof JsonArrayError) throw new SourceError(store.root, `'${file}' is not a JSON array (${err.message}); ${expected}`);
    throw err;
  }
}

/** The records of a `.jsonl` file (JSON lines) or, any other name, of a JSON array file. */
export function jsonRecords(store: ObjectStore, file: string, expected: string): AsyncGenerator<JsonRecord | DamagedUnit> {
  return file.toLowerCase().endsWith('.jsonl') ? jsonLinesRecords(store, file, expected) : jsonFileRecords(store, file, expected);
}

/** A line growing past this is reported and the rest of the file abandoned (flat memory, as for arrays). */
const MAX_LINE_BYTES = 64 << 20;

/**
 * The values of a JSON lines file, one per non-blank line, in order (`index` counts lines from 0). A line
 * that is not JSON or not UTF-8 is a damaged unit named `<file>#<index>`; the other lines are read.
 */
export async function* jsonLinesRecords(store: ObjectStore, file: string, expected: string): AsyncGenerator<JsonRecord | DamagedUnit> {
  const stream = await openLayoutFile(store, file, expected);
  let parts: Buffer[] = [];
  let length = 0;
  let index = 0;
  const line = (): JsonRecord | DamagedUnit | undefined => {
    const bytes = Buffer.concat(parts);
    parts = [];
    length = 0;
    const at = index++;
    const text = decodeUtf8(bytes.at(-1) === 0x0d ? bytes.subarray(0, -1) : bytes);
    if (text === undefined) return damaged(`${file}#${at}`, 'encoding', encodingReason(`${file} line ${at + 1}`));
    if (text.trim() === '') return undefined;
    try {
      return { file, index: at, value: JSON.parse(text) };
    } catch (err) {
      return damaged(`${file}#${at}`, 'json-malformed', `${file} line ${at + 1} is not JSON (${(err as Error).message})`);
    }
  };
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    let from = 0;
    for (let nl = chunk.indexOf(0x0a); nl >= 0; nl = chunk.indexOf(0x0a, from)) {
      parts.push(chunk.subarray(from, nl));
      from = nl + 1;
      const item = line();
      if (item) yield item;
    }
    if (from < chunk.length) {
      parts.push(chunk.subarray(from));
      length += chunk.length - from;
    }
    if (length > MAX_LINE_BYTES) {
      yield damaged(`${file}#${index}`, 'json-too-long', `${file} line ${index + 1} is longer than ${MAX_LINE_BYTES} bytes; the rest of the file is not read`);
      return;
    }
  }
  const last = length > 0 ? line() : undefined;
  if (last) yield last;
}

/** A file the layout names, opened; missing, it is a layout error naming the layout expected. */
async function openLayoutFile(store: ObjectStore, file: string, expected: string): Promise<NodeJS.ReadableStream> {
  try {
    return await store.openRead(file);
  } catch (err) {
    if (err instanceof StoreError && err.code === 'not-found') throw new SourceError(store.root, `'${file}' not found; ${expected}`);
    throw err;
  }
}

/** The value as a plain JSON object, or undefined. */
export function asObject(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
