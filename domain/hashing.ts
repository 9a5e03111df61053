import { createHash } from 'node:crypto';
import { SHORT_INPUT, sha256HexShort } from './sha256.js';

export function sha256Hex(data: Buffer | string): string {
  // Short strings (ids, ranks: millions of them when planning) skip node:crypto's per-call cost.
  if (typeof data === 'string' && data.length <= SHORT_INPUT) return sha256HexShort(data);
  return createHash('sha256').update(data).digest('hex');
}

/**
 * Stable id of a source record: the same record gets the same id in every build. `instance` counts
 * the configured sources of one type (1 for the first): a second folder of a type gets ids of its
 * own, because two folders can hold the same source ids (every img2dataset run starts at key
 * 000000000), while the first keeps the ids it always had.
 */
export function sampleIdFor(source: string, sourceId: string, instance = 1): string {
  if (instance === 1) return `${source}-${sha256Hex(`${source}\u0000${sourceId}`).slice(0, 16)}`;
  return `${source}${instance}-${sha256Hex(`${source}\u0000${instance}\u0000${sourceId}`).slice(0, 16)}`;
}
