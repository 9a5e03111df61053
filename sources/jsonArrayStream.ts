/**
 * Streams the elements of one top-level JSON array, holding one element at a time: ALLaVA ships
 * 500k+ records in a single file, too big to JSON.parse whole.
 *
 * A small state machine over the bytes (strings, escapes, nesting depth) finds where each element
 * ends; the element's text is then handed to JSON.parse. Scanning bytes rather than decoded text is
 * safe across chunk boundaries because every structural character is ASCII, and UTF-8 never uses
 * ASCII bytes inside a multi-byte character.
 *
 * Damage is local where it can be: an element that is not valid JSON yields an error item (its index
 * and byte offset) and parsing goes on with the next one, since its brackets and quotes still balance
 * in practice (a missing value, a trailing comma, an unquoted key). A file that ends early yields its
 * complete elements, then one error item.
 *
 * An unterminated string would otherwise invert the quote parity and swallow the rest of the file as
 * one element. JSON forbids a raw line break inside a string, so one ends the string there: the
 * broken element is reported (where the string broke) and the scan resynchronises at the element's
 * end, keeping the records after it. Released files (ALLaVA, Geo170k, ChartQA) are indented, one key
 * per line, so this recovers them; a minified file still ends as "truncated".
 */

export type JsonArrayItem =
  | { index: number; /** Byte offset of the element's first byte. */ offset: number; value: unknown }
  | { index: number; offset: number; error: string };

/** The input is not a JSON array at all (a JSON object, JSON lines, CSV...): nothing to stream. */
export class JsonArrayError extends Error {
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
  AfterArray,
}

/** The UTF-8 byte order mark some Windows tools write first. */
const BOM = [0xef, 0xbb, 0xbf];
const QUOTE = 0x22;
const LINE_FEED = 0x0a;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

function isSpace(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

export async function* jsonArrayElements(
  chunks: AsyncIterable<Buffer | string>,
  options: JsonArrayOptions = {},
): AsyncGenerator<JsonArrayItem> {
  const maxElementBytes = options.maxElementBytes ?? DEFAULT_MAX_ELEMENT_BYTES;
  let state = State.BeforeArray as State;
  /** Absolute offset of the current chunk's first byte. */
  let base = 0;
  let index = 0;
  // The element being read: its start, the pieces of it seen so far, the scanner's position in it.
  let start = 0;
  let parts: Buffer[] = [];
  let size = 0;
  let depth = 0;
  let inString = false;
  let escaped = false;
  /** Where a line break inside a string showed the current element's string unterminated. */
  let brokenAt: number | undefined;

  const finish = (): JsonArrayItem => {
    const text = (parts.length === 1 ? parts[0]! : Buffer.concat(parts, size)).toString('utf8');
    parts = [];
    size = 0;
    const at = { index: index++, offset: start };
    if (brokenAt !== undefined) {
      return { ...at, error: `unterminated string (a line break inside it at byte ${brokenAt}): this element is skipped, reading resumes after it` };
    }
    if (text.trim() === '') return { ...at, error: 'empty element (two commas in a row)' };
    try {
      return { ...at, value: JSON.parse(text) as unknown };
    } catch (err) {
      return { ...at, error: `not valid JSON: ${(err as Error).message}` };
    }
  };

  for await (const raw of chunks) {
    const chunk = typeof raw === 'string' ? Buffer.from(raw) : raw;
    /** Where the current element's bytes begin in this chunk. */
    let from = 0;
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i]!;
      switch (state) {
        case State.InElement:
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
            parts.push(chunk.subarray(from, i));
            size += i - from;
            yield finish();
            state = b === COMMA ? State.BeforeElement : State.AfterArray;
          }
          continue;
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
        case State.AfterArray:
          if (isSpace(b)) continue;
          yield { index, offset: base + i, error: 'unexpected content after the closing ]' };
          return;
      }
    }
    if (state === State.InElement) {
      parts.push(chunk.subarray(from));
      size += chunk.length - from;
      if (size > maxElementBytes) {
        yield { index, offset: start, error: `element exceeds ${maxElementBytes} bytes (an unterminated string or bracket?); the rest of the file is not read` };
        return;
      }
    }
    base += chunk.length;
  }

  if (state === State.InElement) {
    yield { index, offset: start, error: `the file ends inside this element at byte ${base} (truncated)` };
  } else if (state === State.BeforeElement) {
    yield { index, offset: base, error: `the file ends at byte ${base}, before the array's closing ] (truncated)` };
  } else if (state === State.BeforeArray) {
    yield { index, offset: base, error: 'the file is empty' };
  }
}
