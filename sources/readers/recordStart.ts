/**
 * Finds where the next record of a JSON array starts after a damaged one (sources/readers/jsonArrayStream.ts
 * resynchronises there): the `{` of the first `}, {<key>:` after the damaged record's first byte,
 * with one of the records' first keys, JSON whitespace allowed between the tokens. The bytes come
 * in pieces as the stream is read, up to 64 MiB of them: each piece is scanned once, from where the
 * previous one left off, so seeking costs time linear in the bytes skipped (rescanning all held
 * bytes for every new piece was quadratic).
 */

import { CLOSE_BRACE, COLON, COMMA, isSpace, OPEN_BRACE } from './jsonBytes.js';

const enum Phase {
  /** Looking for a `}`. */
  Search,
  /** After `}`: whitespace, then `,`. */
  AfterClose,
  /** After `,`: whitespace, then `{`. */
  AfterComma,
  /** After `{`: whitespace, then a key's first byte. */
  AfterOpen,
  /** Inside a key, `matched` bytes of it matched so far. */
  InKey,
  /** After a whole key: whitespace, then `:`. */
  AfterKey,
}

export class RecordStartScanner {
  private readonly keys: Buffer[];
  private phase = Phase.Search;
  /** Position of the next byte, counted from the first byte fed (the damaged record's). */
  private at = 0;
  /** Where the candidate record's `{` is, and where its key began. */
  private brace = 0;
  private keyStart = 0;
  /** The keys the bytes since `keyStart` are a prefix of, and how many bytes that is. */
  private alive: Buffer[] = [];
  private matched = 0;

  /** `keys`: the first keys a record may start with, with their quotes (`"id"`). */
  constructor(keys: readonly string[]) {
    this.keys = keys.map((key) => Buffer.from(key, 'latin1'));
  }

  /** Scans the next piece; returns where the next record starts (from the first byte fed) once it is found. */
  feed(piece: Buffer): number | undefined {
    for (let i = 0; i < piece.length; i++) {
      const found = this.step(piece[i]!, this.at++);
      if (found !== undefined) return found;
    }
    return undefined;
  }

  private step(b: number, pos: number): number | undefined {
    switch (this.phase) {
      case Phase.Search:
        // A `}` at the damaged record's first byte cannot end a record before it.
        if (b === CLOSE_BRACE && pos > 0) this.phase = Phase.AfterClose;
        return undefined;
      case Phase.AfterClose:
        if (isSpace(b)) return undefined;
        if (b === COMMA) {
          this.phase = Phase.AfterComma;
          return undefined;
        }
        break;
      case Phase.AfterComma:
        if (isSpace(b)) return undefined;
        if (b === OPEN_BRACE) {
          this.phase = Phase.AfterOpen;
          this.brace = pos;
          return undefined;
        }
        break;
      case Phase.AfterOpen:
        if (isSpace(b)) return undefined;
        this.phase = Phase.InKey;
        this.alive = this.keys;
        this.matched = 0;
        this.keyStart = pos;
        return this.step(b, pos);
      case Phase.InKey: {
        const alive = this.alive.filter((key) => key[this.matched] === b);
        if (alive.length > 0) {
          this.alive = alive;
          this.matched++;
          // A quoted key is never a prefix of another one: the first to be whole is the key.
          if (alive.some((key) => key.length === this.matched)) this.phase = Phase.AfterKey;
          return undefined;
        }
        // The only bytes since the candidate's `}` that may be a `}` are the key's: the next
        // candidate is the first of them, else this byte. The key's bytes are known, so no piece is read again.
        const prefix = this.alive[0]!.subarray(0, this.matched);
        const close = prefix.indexOf(CLOSE_BRACE);
        this.phase = Phase.Search;
        if (close < 0) return this.step(b, pos);
        for (let i = close; i < prefix.length; i++) {
          const found = this.step(prefix[i]!, this.keyStart + i);
          if (found !== undefined) return found;
        }
        return this.step(b, pos);
      }
      case Phase.AfterKey:
        if (isSpace(b)) return undefined;
        if (b === COLON) return this.brace;
        break;
    }
    // Not the candidate's next token: this byte may start the next candidate.
    this.phase = Phase.Search;
    return this.step(b, pos);
  }
}
