/**
 * The source contract: what a source type's reader provides. A source type is one folder,
 * sources/<type>/: `definition.ts` (defineSource: config fields, defaults, docs row; pure, listed in
 * sources/registry.ts) and `reader.ts` (`open(config, sourceIndex, s3): SourceReader`, bound to the
 * type in sources/source.ts): segments() streams samples and SourceProblems, each sample's image an
 * ImageRef whose `locator` (small JSON) only this reader interprets again in readImage() and origin();
 * describe() says which layout and mapping it chose. Shared readers are in sources/readers/; a fixture
 * under test/fixtures/ and `npm run docs:config` (docs/sources.md's source table) complete a type.
 */
import { sampleIdFor } from '../domain/hashing.js';
import type { ObjectStore } from '../storage/objectStore.js';
import type { ImageLocator, ImageOrigin, ImageRef, SourceSample } from '../domain/sample.js';
import { InputError } from '../domain/errors.js';

/**
 * A unit of the dataset that did not become a sample. Sources yield these in the sample stream, in
 * order, instead of dropping the unit silently or aborting the whole dataset for one bad file: the
 * caller records them (the build report lists them) and keeps going with the good samples.
 * Infrastructure failures (network, permissions, a missing root) are thrown, not yielded.
 */
export type SourceProblem = DamagedUnit | FilteredRecord;

interface ProblemBase {
  problem: true;
  /** The record's source id when known, else the damaged unit itself (e.g. `00000.tar`, `file.json#12`). */
  sourceId: string;
  /** Names the file or record and what is wrong with it, or why a policy dropped it. */
  reason: string;
}

/**
 * Corrupt, malformed or truncated data, or a record naming a path outside the dataset root: few, and
 * each worth a look, so they are listed one by one.
 */
export interface DamagedUnit extends ProblemBase {
  kind: 'damaged';
  /**
   * Short stable key of what is wrong, to count by in the build report's accounting: `encoding`,
   * `outside-root`, `json-malformed`, `tar-unreadable`...
   */
  code: string;
}

/**
 * A well-formed record a policy dropped: a multiple-choice or few-shot question, a task type not
 * kept, a download img2dataset reported as failed. Can be a large share of a dataset, so the planner
 * counts them by `filter` rather than listing each.
 */
export interface FilteredRecord extends ProblemBase {
  kind: 'filtered';
  /** Short stable key of the policy, to count by: `multiple-choice`, `task-grounding`... */
  filter: string;
}

export function damaged(sourceId: string, code: string, reason: string): DamagedUnit {
  return { problem: true, kind: 'damaged', code, sourceId, reason };
}

export function filtered(sourceId: string, filter: string, reason: string): FilteredRecord {
  return { problem: true, kind: 'filtered', filter, sourceId, reason };
}

export type SourceItem = SourceSample | SourceProblem;

export function isProblem(item: SourceItem): item is SourceProblem {
  return 'problem' in item;
}

export interface SourceReader {
  /**
   * Streams the dataset in segments (a side file, a tar, a run of records), in a stable deterministic
   * order: every sample, and a SourceProblem for every damaged or filtered unit; never loads the
   * whole dataset. Throws SourceError when the dataset cannot be read at all.
   */
  segments(): AsyncIterable<SourceSegment>;
  /**
   * Bytes of one sample's image, from the locator this reader made. A missing image is a StoreError
   * 'not-found' or a SourceError (the image stage rejects that sample as `missing-image`).
   */
  readImage(ref: ImageRef): Promise<Buffer>;
  /**
   * Where the image of a locator this reader made came from, for people, records and score files;
   * exact once readImage() has read it (a path found inside a zip names the archive and member).
   */
  origin(locator: ImageLocator): ImageOrigin;
  /**
   * The layout this reader reads under its root and how it maps the records (detected when the config
   * says `layout: auto`), in one line for `mmif validate` and `mmif init`. Throws SourceError as
   * segments() would when the root holds no layout it reads.
   */
  describe(): Promise<string>;
}

/**
 * A locator's field, checked: locators come back from stored plans, so one this reader did not make
 * (a hand-edited plan, a bug) fails loudly by name rather than being read as something else.
 */
export function locatorField<K extends 'string' | 'number' | 'object'>(
  locator: ImageLocator,
  field: string,
  kind: K,
): K extends 'string' ? string : K extends 'number' ? number : unknown {
  const value = locator[field];
  if (typeof value !== kind || value === null) throw new Error(`image locator ${JSON.stringify(locator)} has no ${kind} '${field}': this source did not make it`);
  return value as K extends 'string' ? string : K extends 'number' ? number : unknown;
}

/**
 * Records of a dataset in listing order, its samples known by id until built: planning ranks every
 * sample by its id but keeps only the lowest ranks, so a source whose records say enough to tell a
 * sample from a problem builds a sample only when asked (CC3M's side files); the others hand over
 * samples already built (inSegments). A segment per unit, not per record, also saves an async step.
 */
export interface SourceSegment {
  /** In listing order: each sample's source id, and each damaged or filtered unit. */
  records: Array<string | SourceProblem>;
  /** The samples' ids, in order: sampleIds[i] is sample(i)'s. */
  sampleIds: string[];
  /** The i-th sample of the segment (i counts samples only). */
  sample(i: number): SourceSample;
}

/** Records a source builds samples of on demand: `records` hold the samples' source ids. */
export function lazySegment(source: string, records: Array<string | SourceProblem>, sample: (i: number) => SourceSample): SourceSegment {
  return { records, sampleIds: sampleIdsOf(records, source), sample };
}

/** The sample ids of a segment's records (`instance` > 1: a second source of the same type, sampleIdFor). */
export function sampleIdsOf(records: SourceSegment['records'], source: string, instance = 1): string[] {
  const sampleIds: string[] = [];
  for (const record of records) if (typeof record === 'string') sampleIds.push(sampleIdFor(source, record, instance));
  return sampleIds;
}

/** Items already built, in segments of up to `size` (bounded memory, one async step per segment). */
export async function* inSegments(items: AsyncIterable<SourceItem>, size = 1000): AsyncGenerator<SourceSegment> {
  let batch: SourceItem[] = [];
  for await (const item of items) {
    batch.push(item);
    if (batch.length >= size) {
      yield segmentOf(batch);
      batch = [];
    }
  }
  if (batch.length > 0) yield segmentOf(batch);
}

/** One segment of items already built (a source that reads its records in batches: no async step per record). */
export function segmentOf(items: readonly SourceItem[]): SourceSegment {
  const records: SourceSegment['records'] = [];
  const samples: SourceSample[] = [];
  for (const item of items) {
    if (isProblem(item)) records.push(item);
    else {
      records.push(item.sourceId);
      samples.push(item);
    }
  }
  return { records, sampleIds: samples.map((s) => s.sampleId), sample: (i) => samples[i]! };
}

export class SourceError extends InputError {
  override name = 'SourceError';

  constructor(
    /** The dataset root the problem is about. */
    readonly root: string,
    problem: string,
  ) {
    super(`${root}: ${problem}`);
  }
}

/** Reads an object the source listed, or the byte range of a tar member inside one, from a source's store. */
export async function readStored(store: ObjectStore, ref: { key: string; range?: readonly [number, number] }): Promise<Buffer> {
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

/** The fields every source fills the same way (ids derived from source and sourceId only); empty texts are left out. */
export function sourceSample(
  source: string,
  sourceId: string,
  licenseNote: string,
  image: ImageRef,
  text: Pick<SourceSample, 'caption' | 'originalInstruction' | 'originalAnswer' | 'grounding'> = {},
): SourceSample {
  const present = Object.entries(text).filter(([, value]) => value !== undefined && value !== '');
  return { sampleId: sampleIdFor(source, sourceId), source, sourceId, licenseNote, image, ...Object.fromEntries(present) };
}
