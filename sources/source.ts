/** Entry point to the image sources: turns one `sources[i]` entry of the build config into a reader. */
import type { SourceConfig } from '../config/buildConfig.js';
import type { S3Options } from '../storage/openStore.js';
import { openAllava } from './allava/reader.js';
import { openCc3m } from './cc3m/reader.js';
import { openChartqa } from './chartqa/reader.js';
import { sampleIdsOf, type SourceReader } from './contract.js';
import { openGeo170k } from './geo170k/reader.js';
import { openMultiui } from './multiui/reader.js';
import { openRico } from './rico/reader.js';

export {
  SourceError,
  inSegments,
  isProblem,
  type DamagedUnit,
  type FilteredRecord,
  type SourceSegment,
  type SourceItem,
  type SourceProblem,
  type SourceReader,
} from './contract.js';

/**
 * Opens every configured source, in config order. The second and later sources of one type read
 * their records under ids of their own (sampleIdFor's `instance`), so two folders holding the same
 * source ids never share sample ids, stage states or dedupe claims.
 */
export function openSources(configs: readonly SourceConfig[], s3: S3Options): SourceReader[] {
  return configs.map((config, index) => {
    const reader = openSource(config, index, s3);
    const instance = configs.slice(0, index).filter((earlier) => earlier.type === config.type).length + 1;
    return instance === 1 ? reader : withOwnIds(reader, config.type, instance);
  });
}

function withOwnIds(reader: SourceReader, type: string, instance: number): SourceReader {
  return {
    readImage: (ref) => reader.readImage(ref),
    async *segments() {
      for await (const segment of reader.segments()) {
        const sampleIds = sampleIdsOf(segment.records, type, instance);
        yield { records: segment.records, sampleIds, sample: (i) => ({ ...segment.sample(i), sampleId: sampleIds[i]! }) };
      }
    },
  };
}

/** Opening is lazy and cheap: nothing is listed or read until `segments()` or `readImage()` is called. */
export function openSource(config: SourceConfig, sourceIndex: number, s3: S3Options): SourceReader {
  switch (config.type) {
    case 'cc3m':
      return openCc3m(config, sourceIndex, s3);
    case 'allava':
      return openAllava(config, sourceIndex, s3);
    case 'chartqa':
      return openChartqa(config, sourceIndex, s3);
    case 'geo170k':
      return openGeo170k(config, sourceIndex, s3);
    case 'rico':
      return openRico(config, sourceIndex, s3);
    case 'multiui':
      return openMultiui(config, sourceIndex, s3);
  }
}
