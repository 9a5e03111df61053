/**
 * Every source's gzip'd tars, for planning and the build's checks (readers/tarGzExtraction.ts does
 * the work): extracted before any reader lists its root, and what an extraction refused or found
 * damaged handed to the build as source problems, one per member or archive, so they reach
 * `rejects/source-problems.jsonl` and the accounting like a bad record does, and the rest is kept.
 */
import type { SourceConfig } from '../config/sourceConfig.js';
import { openStore } from '../storage/openStore.js';
import type { S3Options } from '../storage/s3Store.js';
import { damaged, segmentOf, type DamagedUnit, type SourceReader } from './contract.js';
import { completedExtractions, extractTarGzArchives, type Extraction } from './readers/tarGzExtraction.js';

/** Extracts each source's archives that are not yet (SourceError when a root's cache cannot be written). */
export async function extractSourceArchives(config: Pick<SourceConfig, 'uri'>, s3: S3Options, onRead?: (bytes: number) => void): Promise<Extraction[]> {
  return extractTarGzArchives(openStore(config.uri, s3), onRead);
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
