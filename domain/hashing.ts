import { createHash } from 'node:crypto';

export function sha256Hex(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Stable id of a source record: the same record gets the same id in every build. */
export function sampleIdFor(source: string, sourceId: string): string {
  return `${source}-${sha256Hex(`${source}\u0000${sourceId}`).slice(0, 16)}`;
}
