import { createHash } from 'node:crypto';
import { SHORT_INPUT, sha256HexShort } from './sha256.js';

export function sha256Hex(data: Buffer | string): string {
  // Short strings (ids, ranks: millions of them when planning) skip node:crypto's per-call cost.
  if (typeof data === 'string' && data.length <= SHORT_INPUT) return sha256HexShort(data);
  return createHash('sha256').update(data).digest('hex');
}

/** Stable id of a source record: the same record gets the same id in every build. */
export function sampleIdFor(source: string, sourceId: string): string {
  return `${source}-${sha256Hex(`${source}\u0000${sourceId}`).slice(0, 16)}`;
}
