/**
 * Streams the elements of one top-level JSON array, holding one element at a time (ALLaVA ships 500k+
 * records in one file, too big to JSON.parse whole). A state machine over the bytes finds where each
 * element ends (safe across chunks: every structural character is ASCII, never inside a UTF-8
 * sequence), and the element's text goes to JSON.parse. Damage is local: a bad element yields an error
 * item (index, byte offset) and parsing goes on. Where the scanner can no longer trust where elements
 * end (an unterminated string), it resynchronises on the next `}, {"<first key>":` with the damaged
 * record's own first key and reports the skipped bytes as one error item; a raw line break ends a
 * string (JSON forbids one inside), so damage stays inside its element in an indented file.
 */

import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, COMMA, isSpace, LINE_FEED, OPEN_BRACE, OPEN_BRACKET, QUOTE } from './jsonBytes.js';
import { RecordStartScanner } from './recordStart.js';
import { decodeUtf8, encodingReason } from './utf8.js';
import { RecordError } from '../../domain/errors.js';

export type JsonArrayItem =
  | { index: number; /** Byte offset of the element's first byte. */ offset: number; value: unknown }
  | { index: number; offset: number; error: string; /** A short stable key of the error, to count by. */ code: JsonErrorCode };

/**
 * `json-record-skipped`: a broken record skipped by resynchronising at the next one; `json-rest-unread`:
 * the rest of the file after a broken record (no next record found); the others name the damage itself.
 */
export type JsonErrorCode =
  | 'json-record-skipped'
  | 'json-rest-unread'
  | 'json-unterminated-string'
  | 'json-malformed'
  | 'json-empty-element'
  | 'json-truncated'
  | 'json-trailing-content'
  | 'json-empty-file'
  | 'encoding';

/** The input is not a JSON array at all (a JSON object, JSON lines, CSV...): nothing to stream. */
export class JsonArrayError extends RecordError {
  override name = 'JsonArrayError';
}

export interface JsonArrayOptions {
  /**
   * An element growing past this is reported and the rest of the file is abandoned: it is almost
   * certainly an unterminated string or bracket swallowing the file, and holding it would break the
   * flat-memory promise.
   */
  maxElementBytes?: number;
}

const DEFAULT_MAX_ELEMENT_BYTES = 64 << 20;

const enum State {
  BeforeArray,
  BeforeElement,
  InElement,
  /** After a damaged object element: looking for the next record's start in the raw bytes. */
  Seeking,
  AfterArray,
}

/** The UTF-8 byte order mark some Windows tools write first. */
const BOM = [0xef, 0xbb, 0xbf];

export async function* jsonArrayElements(chunks: AsyncIterable<Buffer | string>, options: JsonArrayOptions = {}): AsyncGenerator<JsonArrayItem> {
  const maxElementBytes = options.maxElementBytes ?? DEFAULT_MAX_ELEMENT_BYTES;
  let state = State.BeforeArray as State;
  /** Absolute offset of the current chunk's first byte. */
  let base = 0;
  /** Bytes read from `chunks` so far. */
  let streamed = 0;
  let index = 0;
  // The element being read (or, when seeking, the bytes from the damaged element's start): its
  // start, the pieces of it seen so far, the scanner's position in it.
  let start = 0;
  let parts: Buffer[] = [];
  let size = 0;
  let depth = 0;
  let inString = false;
  let escaped = false;
  /** Where a line break inside a string showed the current element's string unterminated. */
  let brokenAt: number | undefined;
  /** While seeking: the scanner for the next record's start, how many held parts it has scanned, and why the element was damaged. */
  let seeker: RecordStartScanner | undefined;
  let seekedParts = 0;
  let seekWhy = '';
  /** Bytes to scan again after a resynchronisation, before reading on; they end where the stream has been read to. */
  let replay: Buffer | undefined;

  const held = (): Buffer => (parts.length === 1 ? parts[0]! : Buffer.concat(parts, size));
  const hold = (piece: Buffer): void => {
    parts.push(piece);
    size += piece.length;
  };
  const release = (): void => {
    parts = [];
    size = 0;
  };

  /** The first key of the array's first well-formed object: records of one array share it. */
  let recordKey: string | undefined;

  /** Starts seeking when the element is an object with a first key to seek; false otherwise. */
  const startSeeking = (element: Buffer, why: string): boolean => {
    const own = firstKey(element);
    if (own === undefined) return false;
    seeker = new RecordStartScanner(recordKey === undefined || recordKey === own ? [own] : [recordKey, own]);
    seekedParts = 0;
    seekWhy = why;
    state = State.Seeking;
    return true;
  };

  /** The skipped element's error item once the held bytes contain the next record's start (then replayed), else undefined. */
  const seek = (): JsonArrayItem | undefined => {
    let cut: number | undefined;
    while (cut === undefined && seekedParts < parts.length) cut = seeker!.feed(parts[seekedParts++]!);
    if (cut === undefined) return undefined;
    replay = held().subarray(cut);
    release();
    base = start + cut;
    state = State.BeforeElement;
    return {
      index: index++,
      offset: start,
      error: `${seekWhy}; ${cut} bytes skipped (1 record), reading resumes at the next record, byte ${start + cut}`,
      code: 'json-record-skipped',
    };
  };

  const input = chunks[Symbol.asyncIterator]();
  for (;;) {
    let chunk: Buffer;
    if (replay) {
      chunk = replay;
      replay = undefined;
    } else {
      const next = await input.next();
      if (next.done) {
        // An element still open at the end: an unterminated string or bracket may have swallowed later records.
        const why = `an unterminated string or bracket runs to the end of the file at byte ${streamed}`;
        const openAtEnd = state === State.InElement;
        const skipped = openAtEnd && startSeeking(held(), why) ? seek() : undefined;
        // An element still open with no record after it: the file is cut inside it. One that ended
        // but did not parse keeps its own reason (a malformed last record is not a truncated file).
        if (!skipped && openAtEnd) state = State.InElement;
        if (!skipped) break;
        yield skipped;
        continue;
      }
      chunk = typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
      base = streamed;
      streamed += chunk.length;
    }
    /** Where the current element's bytes begin in this chunk. */
    let from = 0;
    scan: for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i]!;
      switch (state) {
        case State.InElement: {
          if (inString) {
            if (escaped) escaped = false;
            else if (b === BACKSLASH) escaped = true;
            else if (b === QUOTE) inString = false;
            else if (b === LINE_FEED) {
              inString = false;
              brokenAt ??= base + i;
            }
            continue;
          }
          if (b === QUOTE) inString = true;
          else if (b === OPEN_BRACE || b === OPEN_BRACKET) depth++;
          else if ((b === CLOSE_BRACE || b === CLOSE_BRACKET) && depth > 0) depth--;
          else if (depth === 0 && (b === COMMA || b === CLOSE_BRACKET)) {
            // A comma or the array's own ']' outside any string or bracket ends the element.
            hold(chunk.subarray(from, i));
            const element = held();
            const at = { index, offset: start };
            const item: JsonArrayItem =
              brokenAt === undefined ? parsed(element, at) : { ...at, error: `unterminated string (a line break inside it at byte ${brokenAt})`, code: 'json-unterminated-string' };
            if ('error' in item && startSeeking(element, item.error)) {
              // The boundary may lie inside this element or after it: seek through both.
              hold(chunk.subarray(i));
              from = chunk.length;
              break scan;
            }
            if (recordKey === undefined && 'value' in item) recordKey = firstKey(element);
            release();
            index++;
            yield item;
            state = b === COMMA ? State.BeforeElement : State.AfterArray;
          }
          continue;
        }
        case State.BeforeElement:
          if (isSpace(b)) continue;
          if (b === CLOSE_BRACKET) {
            state = State.AfterArray; // `[]`, or a trailing comma: nothing lost
            continue;
          }
          state = State.InElement;
          start = base + i;
          from = i;
          depth = 0;
          inString = false;
          escaped = false;
          brokenAt = undefined;
          i--; // scan this byte as part of the element
          continue;
        case State.BeforeArray:
          if (isSpace(b) || (base + i < BOM.length && b === BOM[base + i])) continue;
          if (b !== OPEN_BRACKET) {
            throw new JsonArrayError(`expected a JSON array, found ${JSON.stringify(String.fromCharCode(b))} at byte ${base + i}`);
          }
          state = State.BeforeElement;
          continue;
        case State.Seeking:
          from = 0;
          break scan;
        case State.AfterArray:
          if (isSpace(b)) continue;
          yield { index, offset: base + i, error: 'unexpected content after the closing ]', code: 'json-trailing-content' };
          return;
      }
    }
    if (state === State.InElement || state === State.Seeking) {
      if (from < chunk.length) hold(chunk.subarray(from));
      if (state === State.InElement && size > maxElementBytes) {
        startSeeking(held(), `element exceeds ${maxElementBytes} bytes (an unterminated string or bracket)`);
      }
      if (state === State.Seeking) {
        const skipped = seek();
        if (skipped) {
          yield skipped;
        } else if (size > maxElementBytes) {
          yield { index, offset: start, error: `${seekWhy}; no next record within ${maxElementBytes} bytes, the rest of the file is not read`, code: 'json-rest-unread' };
          return;
        }
      }
    }
  }

  if (state === State.InElement) {
    yield { index, offset: start, error: `the file ends inside this element at byte ${streamed} (truncated)`, code: 'json-truncated' };
  } else if (state === State.Seeking) {
    yield { index, offset: start, error: `${seekWhy}; no later record follows it before the end of the file at byte ${streamed}`, code: 'json-rest-unread' };
  } else if (state === State.BeforeElement) {
    yield { index, offset: streamed, error: `the file ends at byte ${streamed}, before the array's closing ] (truncated)`, code: 'json-truncated' };
  } else if (state === State.BeforeArray) {
    yield { index, offset: streamed, error: 'the file is empty', code: 'json-empty-file' };
  }
}

function parsed(element: Buffer, at: { index: number; offset: number }): JsonArrayItem {
  const text = decodeUtf8(element);
  if (text === undefined) return { ...at, error: encodingReason('this element'), code: 'encoding' };
  if (text.trim() === '') return { ...at, error: 'empty element (two commas in a row)', code: 'json-empty-element' };
  try {
    return { ...at, value: JSON.parse(text) as unknown };
  } catch (err) {
    return { ...at, error: `not valid JSON: ${(err as Error).message}`, code: 'json-malformed' };
  }
}

/** The first key of an object element, with its quotes (`"id"`), or undefined when the element is not an object that starts with one. */
function firstKey(element: Buffer): string | undefined {
  return /^\{\s*("(?:[^"\\]|\\.)*")\s*:/.exec(element.subarray(0, 4096).toString('latin1'))?.[1];
}
