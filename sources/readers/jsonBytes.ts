/** The ASCII bytes JSON's structure is made of, for the byte scanners (jsonArrayStream.ts, recordStart.ts). */
export const QUOTE = 0x22;
export const LINE_FEED = 0x0a;
export const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;

/** JSON's whitespace: space, line feed, carriage return, tab. */
export function isSpace(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}
