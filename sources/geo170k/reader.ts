/**
 * Geo170K (G-LLaVA) as downloaded: `qa_tuning.json` and `alignment.json` at the root, JSON arrays of
 * LLaVA records whose `image` (e.g. `geoqa_plus/10756.png`) lives under `images/`. QA questions are
 * multiple choice wrapped in a "First perform reasoning..." or "Based on the image, directly select..."
 * preamble: the preamble and the `Choices:` block are stripped and the stem kept
 * (question.dropMultipleChoice defaults to false here), for the refinement stage to turn into an open
 * question. Answers end in `Answer:C`: letters are rewritten to the option's text.
 */
import type { SourceConfigOf } from '../../config/sourceConfig.js';
import { sourceStore } from '../readers/extractedView.js';
import type { S3Options } from '../../storage/s3Store.js';
import type { ObjectStore } from '../../storage/objectStore.js';
import { SourceError, inSegments, type SourceItem, type SourceReader } from '../contract.js';
import { llavaItems, llavaParquetItems, type LlavaPolicy } from '../readers/conversations.js';
import { describeRoot } from '../readers/jsonFiles.js';
import { hasParquetFiles, parquetImages, requireParquetFiles } from '../readers/hfRows.js';
import { optionTexts, withoutOptionLetters } from '../referenceAnswers.js';

const EXPECTED =
  'expected the Geo170K layout: qa_tuning.json and/or alignment.json (JSON arrays of {id, image, conversations}) ' +
  'at the root, with the diagrams they name under images/ (e.g. images/geoqa_plus/10756.png) or in images.zip beside them; ' +
  "or LLaVA-OneVision-Data's geo170k(qa)/ and geo170k(align)/ train-*.parquet";

/** LLaVA-OneVision-Data's config for each release file. */
const ONEVISION_CONFIGS: Record<string, string> = { 'qa_tuning.json': 'geo170k(qa)', 'alignment.json': 'geo170k(align)' };

type Geo170kConfig = SourceConfigOf<'geo170k'>;

export function open(config: Geo170kConfig, sourceIndex: number, s3: S3Options): SourceReader {
  const store = sourceStore(config.uri, s3);
  const images = parquetImages(store);
  const onevision = { configs: config.files.map((f) => ONEVISION_CONFIGS[f] ?? f) };
  const policy: LlavaPolicy = {
    source: 'geo170k',
    licenseNote: config.licenseNote,
    sourceIndex,
    question: config.question,
    // The options are stripped from the question, so the answer's letter becomes the option's text.
    reference: (answer, rawQuestion) => withoutOptionLetters(answer, optionTexts(rawQuestion)),
  };
  async function* items(): AsyncGenerator<SourceItem> {
    if ((await layoutOf(store, config, onevision)) === 'release') {
      yield* llavaItems({ ...policy, store, files: config.files, imageDir: 'images', expected: EXPECTED });
    } else {
      yield* llavaParquetItems(policy, store, await requireParquetFiles(store, onevision));
    }
  }
  return {
    segments: () => inSegments(items()),
    readImage: (ref) => images.read(ref.locator),
    origin: images.origin,
    describe: async () =>
      (await layoutOf(store, config, onevision)) === 'release'
        ? `files ${config.files.join(', ')} (LLaVA conversations), diagrams under images/ or in images.zip`
        : `LLaVA-OneVision Parquet ${onevision.configs.join(', ')} (conversations, images in the table)`,
  };
}

/** The layout the config names, or the one the root holds: the release's JSON files first. */
async function layoutOf(store: ObjectStore, config: Geo170kConfig, onevision: { configs: string[] }): Promise<'release' | 'onevision'> {
  if (config.layout !== 'auto') return config.layout;
  // The release unless only the OneVision Parquet is there (the release's reader says what is missing).
  if ((await Promise.all(config.files.map((file) => store.exists(file)))).some(Boolean)) return 'release';
  return (await hasParquetFiles(store, onevision)) ? 'onevision' : 'release';
}
