/**
 * Strict UTF-8 decoding of dataset text (captions, JSON, tables). Buffer#toString would replace bad
 * bytes with U+FFFD and hand a corrupted caption or question to the model without a word; a record
 * in another encoding is reported as `encoding:` instead.
 */
const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** The text, or undefined when the bytes are not valid UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return strict.decode(bytes);
  } catch {
    return undefined;
  }
}

/** The reason a record whose text is not UTF-8 is reported with. */
export function encodingReason(what: string): string {
  return `encoding: ${what} is not valid UTF-8`;
}
