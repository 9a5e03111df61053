/**
 * The unit of work: one source image on its way to an MM-IFInstruct record and an MM-IFDPO pair.
 * Everything here is small JSON: it is what the shard plan stores and what stage state refers to.
 */
import type { RichnessScore } from './richness.js';

/** Where a sample's image bytes live, relative to its source's root. */
export interface ImageRef {
  /** Index into BuildConfig.sources. */
  sourceIndex: number;
  key: string;
  /** Byte range [start, end) inside `key`, for a member of an uncompressed tar. */
  range?: [number, number];
  /**
   * The webdataset record (key) in tar `key` whose image this is, when planning took the record from
   * img2dataset's parquet and left finding its byte range to the shard that reads it.
   */
  tarRecord?: string;
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
