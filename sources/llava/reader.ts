/**
 * LLaVA-style instruction data (sources/llava/definition.ts): the conversation records of
 * sources/readers/conversations.ts, from the files the config names or every `.json` / `.jsonl` at the
 * root, with images named by path under `imageDir` (sources/readers/namedImages.ts: where the zip
 * lookup of issue 29 goes, for images shipped in archives).
 */
import type { SourceConfigOf } from '../../config/sourceConfig.js';
import type { ObjectStore } from '../../storage/objectStore.js';
import { sourceStore } from '../readers/extractedView.js';
import type { S3Options } from '../../storage/s3Store.js';
import { SourceError, inSegments, type SourceReader } from '../contract.js';
import { llavaItems } from '../readers/conversations.js';
import { describeRoot } from '../readers/jsonFiles.js';
import { pathNamedReader } from '../readers/namedImages.js';

type LlavaConfig = SourceConfigOf<'llava'>;

const EXPECTED =
  'expected LLaVA-style data: JSON arrays (.json) or JSON lines (.jsonl) of {id, image, conversations} at the root ' +
  '(or named by `files`), with the images they name under the root or under `imageDir`';

export function open(config: LlavaConfig, sourceIndex: number, s3: S3Options): SourceReader {
  const store = sourceStore(config.uri, s3);
  return pathNamedReader(store, {
    async *segments() {
      yield* inSegments(
        llavaItems({
          source: 'llava',
          store,
          files: await filesOf(store, config),
          imageDir: config.imageDir,
          licenseNote: config.licenseNote,
          sourceIndex,
          question: config.question,
          expected: EXPECTED,
        }),
      );
    },
    describe: async () => `files ${(await filesOf(store, config)).join(', ')} (LLaVA conversations), images under '${config.imageDir || '.'}'`,
  });
}

/** The configured files, else the `.json` and `.jsonl` files at the root, in listing order. */
async function filesOf(store: ObjectStore, config: LlavaConfig): Promise<readonly string[]> {
  if (config.files) return config.files;
  const files: string[] = [];
  for await (const { key } of store.list('')) if (!key.includes('/') && /\.jsonl?$/i.test(key)) files.push(key);
  if (files.length === 0) throw new SourceError(store.root, `no .json or .jsonl file at the root (${await describeRoot(store)}); ${EXPECTED}`);
  return files;
}
