/**
 * What every image source (CC3M now; ALLaVA, ChartQA... later) provides. Kept apart from the
 * registry in source.ts so source modules can import it without an import cycle.
 */
import type { ObjectStore } from '../storage/objectStore.js';
import type { ImageRef, SourceSample } from '../domain/sample.js';

/**
 * A unit of the dataset that could not become a sample: a truncated tar, a sidecar that is not JSON,
 * an img2dataset record whose download failed. Sources yield these in the sample stream, in order,
 * instead of dropping the unit silently or aborting the whole dataset for one bad file: the caller
 * counts and records them (the build report lists them) and keeps going with the good samples.
 * Infrastructure failures (network, permissions, a missing root) are thrown, not yielded.
 */
export interface SourceProblem {
  problem: true;
  /** The record's source id when known, else the damaged unit itself (e.g. `00000.tar`). */
  sourceId: string;
  /** Names the file and what is wrong with it. */
  reason: string;
}

export type SourceItem = SourceSample | SourceProblem;

export function isProblem(item: SourceItem): item is SourceProblem {
  return 'problem' in item;
}

export interface SourceReader {
  /**
   * Streams every sample, and a SourceProblem for every damaged unit, in a stable deterministic order;
   * never loads the whole dataset. Throws SourceError when the dataset cannot be read at all.
   */
  samples(): AsyncIterable<SourceItem>;
  /** Bytes of one sample's image. */
  readImage(ref: ImageRef): Promise<Buffer>;
}

export class SourceError extends Error {
  override name = 'SourceError';

  constructor(
    /** The dataset root the problem is about. */
    readonly root: string,
    problem: string,
  ) {
    super(`${root}: ${problem}`);
  }
}

/** Reads an object, or the byte range of a tar member inside one, from a source's store. */
export async function readStored(store: ObjectStore, ref: { key: string; range?: [number, number] }): Promise<Buffer> {
  if (!ref.range) {
    const body = await store.get(ref.key);
    if (!body) throw new SourceError(store.root, `'${ref.key}' has disappeared since it was listed`);
    return body;
  }
  const [start, end] = ref.range;
  const body = await store.getRange(ref.key, start, end);
  if (body.length !== end - start) {
    throw new SourceError(store.root, `'${ref.key}' ends before bytes [${start}, ${end}): the file has changed since it was listed`);
  }
  return body;
}
