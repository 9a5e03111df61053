/**
 * Entry point to the image sources: turns one `sources[i]` entry of the build config into a reader.
 * Each registered source type (sources/registry.ts) is bound here to its reader,
 * sources/<type>/reader.ts `open`; a registered type without one does not compile.
 */
import { sourceNames, type SourceConfig, type SourceConfigOf } from '../config/sourceConfig.js';
import type { S3Options } from '../storage/s3Store.js';
import * as allava from './allava/reader.js';
import * as cc3m from './cc3m/reader.js';
import * as chartqa from './chartqa/reader.js';
import { sampleIdsOf, type SourceReader } from './contract.js';
import * as geo170k from './geo170k/reader.js';
import { hubSnapshot } from './readers/hfDataset.js';
import * as imagefolder from './imagefolder/reader.js';
import * as llava from './llava/reader.js';
import * as multiui from './multiui/reader.js';
import * as parquet from './parquet/reader.js';
import type { SourceType } from './registry.js';
import * as rico from './rico/reader.js';
import { withArchiveProblems } from './sourceArchives.js';

type Open<T extends SourceType> = (config: SourceConfigOf<T>, sourceIndex: number, s3: S3Options) => SourceReader;

const READERS: { [T in SourceType]: Open<T> } = {
  cc3m: cc3m.open,
  allava: allava.open,
  chartqa: chartqa.open,
  geo170k: geo170k.open,
  rico: rico.open,
  multiui: multiui.open,
  imagefolder: imagefolder.open,
  llava: llava.open,
  parquet: parquet.open,
};

/**
 * Opens every configured source, in config order. Each source's samples carry its name
 * (sourceNames: its `name`, or its type, `<type>-<n>` when the type repeats), so records, card and
 * reports tell two sources of one type apart. The second and later sources of one type also read
 * their records under ids of their own (sampleIdFor's `instance`), so two folders holding the same
 * source ids never share sample ids, stage states or dedupe claims.
 */
export function openSources(configs: readonly SourceConfig[], s3: S3Options): SourceReader[] {
  const names = sourceNames(configs);
  return configs.map((config, index) => {
    const reader = withArchiveProblems(withHubRevision(openSource(config, index, s3), config.uri), config.uri, s3);
    const instance = configs.slice(0, index).filter((earlier) => earlier.type === config.type).length + 1;
    return instance === 1 && names[index] === config.type ? reader : named(reader, config.type, instance, names[index]!);
  });
}

/** A root inside the Hugging Face cache: every origin names the snapshot's repository and revision. */
function withHubRevision(reader: SourceReader, uri: string): SourceReader {
  const hub = hubSnapshot(uri);
  return hub ? { ...reader, origin: (locator) => ({ ...reader.origin(locator), hub }) } : reader;
}

function named(reader: SourceReader, type: string, instance: number, name: string): SourceReader {
  return {
    ...reader,
    async *segments() {
      for await (const segment of reader.segments()) {
        const sampleIds = sampleIdsOf(segment.records, type, instance);
        yield { records: segment.records, sampleIds, sample: (i) => ({ ...segment.sample(i), sampleId: sampleIds[i]!, source: name }) };
      }
    },
  };
}

/** Opening is lazy and cheap: nothing is listed or read until `segments()`, `readImage()` or `describe()` is called. */
export function openSource(config: SourceConfig, sourceIndex: number, s3: S3Options): SourceReader {
  return (READERS[config.type] as Open<SourceType>)(config, sourceIndex, s3);
}
