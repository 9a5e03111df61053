/**
 * Every source's gzip'd tars, for the build's checks and planning (readers/tarGzExtraction.ts does
 * the work): extracted once per build, before any reader lists its root (the extractArchives
 * activity, `mmif validate`), each root listed once for it; a root whose cache cannot be written is
 * handed back with its one line, for the checks to list and the build to fail on (ADR 0079). What
 * an extraction refused or found damaged reaches the build as source problems, one per member or
 * archive, so they reach `rejects/source-problems.jsonl` and the accounting like a bad record does,
 * and the rest is kept.
 */
import type { SourceConfig } from '../config/sourceConfig.js';
import { openStore } from '../storage/openStore.js';
import type { S3Options } from '../storage/s3Store.js';
import { damaged, segmentOf, SourceError, type DamagedUnit, type SourceReader } from './contract.js';
import { completedExtractions, extractTarGzArchives, type Extraction } from './readers/tarGzExtraction.js';

/** A source whose archives could not be extracted (its cache cannot be written): its place among the sources, and why in one line naming its root. */
export interface Unextracted {
  source: number;
  problem: string;
}

/** What follows the extraction of each source in turn: the one being extracted (named), and each compressed byte read. */
export interface ExtractionProgress {
  start(source: string): void;
  read(bytes: number): void;
}

/** Extracts each source's archives that are not yet; the sources whose cache cannot be written, each with its SourceError's line. */
export async function extractEverySource(sources: ReadonlyArray<Pick<SourceConfig, 'type' | 'uri'>>, s3: S3Options, progress?: ExtractionProgress): Promise<Unextracted[]> {
  const unextracted: Unextracted[] = [];
  for (const [i, source] of sources.entries()) {
    progress?.start(`sources[${i}] (${source.type} ${source.uri})`);
    try {
      await extractTarGzArchives(openStore(source.uri, s3), progress && ((bytes) => progress.read(bytes)));
    } catch (err) {
      if (!(err instanceof SourceError)) throw err;
      unextracted.push({ source: i, problem: err.message });
    }
  }
  return unextracted;
}

/** An extraction's problems: each member refused (`archive-member-refused`) and the damage (`archive-damaged`). */
export function extractionProblems(extraction: Extraction): DamagedUnit[] {
  return [
    ...extraction.refused.map((member) => damaged(extraction.key, 'archive-member-refused', `${extraction.key}: member ${member}; not extracted`)),
    ...(extraction.damage ? [damaged(extraction.key, 'archive-damaged', `${extraction.damage}; the members before the damage are read`)] : []),
  ];
}

/** The reader with its root's extraction problems after its own segments (the first segment stays the reader's layout check). */
export function withArchiveProblems(reader: SourceReader, uri: string, s3: S3Options): SourceReader {
  return {
    ...reader,
    async *segments() {
      yield* reader.segments();
      const problems = (await completedExtractions(openStore(uri, s3))).flatMap(extractionProblems);
      if (problems.length > 0) yield segmentOf(problems);
    },
  };
}
