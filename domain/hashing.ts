/**
 * The content hashes the engine keys things by: SHA-256 in hex, and the stable id of a source
 * record, which every stage, cache key and output record names a sample by.
 */
import { hash } from 'node:crypto';

/**
 * Hex SHA-256 of `data` (a string as UTF-8). Node's one-shot crypto.hash (Node >= 20.12): planning
 * hashes every record twice (its sample id, then its seeded rank): docs/adr/0014-one-shot-sha256.md.
 */
export function sha256Hex(data: Buffer | string): string {
  return hash('sha256', data, 'hex');
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
