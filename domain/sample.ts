/**
 * The unit of work: one source image on its way to an MM-IFInstruct record and an MM-IFDPO pair.
 * Everything here is small JSON: it is what the shard plan stores and what stage state refers to.
 */
import type { RichnessScore } from './richness.js';

/** A small JSON value, as a locator holds. */
type LocatorValue = string | number | boolean | null | readonly LocatorValue[] | { readonly [key: string]: LocatorValue };

/**
 * How a source finds one image again: small JSON that only the source which made it reads (a path
 * under its root, a tar member's byte range, a zip member, a Parquet file with row group and row).
 * Everything else carries it without looking inside (sources/contract.ts).
 */
export type ImageLocator = { readonly [key: string]: LocatorValue };

/**
 * Where an image came from, for people, records and score files: a file under the source's root, the
 * member or row inside it (a zip or tar member, `row 12 (row group 0)`), or, for a webdataset record
 * planned from its tar's side file, the record key (its member is found, extension and all, only
 * when read). `hub`: the root is a Hugging Face cache snapshot, `<repo>/snapshots/<revision>/`.
 */
export interface ImageOrigin {
  file: string;
  member?: string;
  record?: string;
  hub?: { repo: string; revision: string };
}

/** Where a sample's image bytes live. */
export interface ImageRef {
  /** Index into BuildConfig.sources. */
  sourceIndex: number;
  locator: ImageLocator;
}

export interface SourceSample {
  /** Stable across builds: derived from source name and source id only. */
  sampleId: string;
  source: string;
  sourceId: string;
  licenseNote: string;
  image: ImageRef;
  /** Text that came with the image (CC3M caption); grounding only, never the instruction. */
  caption?: string;
  /** The dataset's own question, cleaned of `<image>` tokens and boilerplate (ALLaVA, ChartQA...). */
  originalInstruction?: string;
  /** The dataset's answer to it (a ChartQA label): grounding for the answer stage. */
  originalAnswer?: string;
  /** Extra text about the image for the instruction stage: a ChartQA data table, RICO screen text. */
  grounding?: string;
  /** How rich the image scored when planning selected it by richness (sources[].richness). */
  richness?: RichnessScore;
}
