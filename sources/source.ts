/** Entry point to the image sources: turns one `sources[i]` entry of the build config into a reader. */
import type { SourceConfig } from '../config/buildConfig.js';
import type { S3Options } from '../storage/openStore.js';
import { openCc3m } from './cc3m.js';
import type { SourceReader } from './contract.js';

export { SourceError, isProblem, type SourceItem, type SourceProblem, type SourceReader } from './contract.js';

/** Opening is lazy and cheap: nothing is listed or read until `samples()` or `readImage()` is called. */
export function openSource(config: SourceConfig, sourceIndex: number, s3: S3Options): SourceReader {
  switch (config.type) {
    case 'cc3m':
      return openCc3m(config, sourceIndex, s3);
  }
}
