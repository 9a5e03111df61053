/**
 * ALLaVA-4V (FreedomIntelligence/ALLaVA-4V) as downloaded from the Hub: one JSON array per subset,
 *   allava_laion/ALLaVA-Instruct-LAION-4V.json   allava_laion/ALLaVA-Caption-LAION-4V.json
 *   allava_vflan/ALLaVA-Instruct-VFLAN-4V.json   allava_vflan/ALLaVA-Caption-VFLAN-4V.json
 * of LLaVA records `{id, image: "allava_laion/images/100277305.jpeg", conversations, original_caption?, url?}`,
 * image paths relative to the root. Files of 500k+ records are streamed, never loaded whole.
 * Vision-FLAN questions often carry answer options or demonstrations: the question filter drops them.
 */
import type { SourceConfigOf } from '../../config/sourceConfig.js';
import { sourceStore } from '../readers/extractedView.js';
import type { S3Options } from '../../storage/s3Store.js';
import type { ObjectStore } from '../../storage/objectStore.js';
import { SourceError, inSegments, type SourceItem, type SourceReader } from '../contract.js';
import { describeRoot } from '../readers/jsonFiles.js';
import { llavaItems, llavaParquetItems, type LlavaPolicy } from '../readers/conversations.js';
import { hasParquetFiles, parquetImages, requireParquetFiles } from '../readers/hfRows.js';

/** The LLaVA-OneVision Parquet copy's configs (`allava_instruct_laion4v/`, `allava_instruct_vflan4v/`). */
const ONEVISION = { configs: ['allava*'] };

/** Read in this order when the config names no files; the Caption files' questions are generic "describe the image" prompts. */
const ALLAVA_FILES = [
  'allava_laion/ALLaVA-Instruct-LAION-4V.json',
  'allava_laion/ALLaVA-Caption-LAION-4V.json',
  'allava_vflan/ALLaVA-Instruct-VFLAN-4V.json',
  'allava_vflan/ALLaVA-Caption-VFLAN-4V.json',
];

const EXPECTED =
  `expected the ALLaVA-4V layout: JSON arrays of {id, image, conversations} (${ALLAVA_FILES.join(', ')}) ` +
  'with the image paths they name (allava_laion/images/..., allava_vflan/images/...) under the same root, as files or in zip archives ' +
  '(allava_laion/image_chunks/images_<n>.zip), or `files` naming the JSON arrays; or the LLaVA-OneVision Parquet copy (allava*/train-*.parquet)';

export function open(config: SourceConfigOf<'allava'>, sourceIndex: number, s3: S3Options): SourceReader {
  const store = sourceStore(config.uri, s3);
  const images = parquetImages(store);
  return {
    segments: () => inSegments(allavaSamples(store, config, sourceIndex)),
    readImage: (ref) => images.read(ref.locator),
    origin: images.origin,
    describe: async () =>
      (await layoutOf(store, config)) === 'release'
        ? `files ${(config.files ?? (await presentFiles(store))).join(', ')} (LLaVA conversations), images named under the root (files or zip members)`
        : `LLaVA-OneVision Parquet: ${(await requireParquetFiles(store, ONEVISION)).map((f) => f.key).join(', ')} (conversations, images in the table)`,
  };
}

async function* allavaSamples(store: ObjectStore, config: SourceConfigOf<'allava'>, sourceIndex: number): AsyncGenerator<SourceItem> {
  const policy: LlavaPolicy = {
    source: 'allava',
    licenseNote: config.licenseNote,
    sourceIndex,
    question: config.question,
    // LAION records keep the image's alt text: grounding, like a CC3M caption.
    extras: (record) => (typeof record.original_caption === 'string' ? { caption: record.original_caption.trim() } : {}),
  };
  if ((await layoutOf(store, config)) === 'onevision') {
    yield* llavaParquetItems(policy, store, await requireParquetFiles(store, ONEVISION));
    return;
  }
  const files = config.files ?? (await presentFiles(store));
  yield* llavaItems({ ...policy, store, files, imageDir: '', expected: EXPECTED });
}

/** The layout the config names, or the one the root holds: the release's JSON files first. */
async function layoutOf(store: ObjectStore, config: SourceConfigOf<'allava'>): Promise<'release' | 'onevision'> {
  if (config.layout !== 'auto') return config.layout;
  // Files named in the config, or any of the release's present: the release (whose reader says what is missing).
  if (config.files || (await Promise.all(ALLAVA_FILES.map((file) => store.exists(file)))).some(Boolean)) return 'release';
  return (await hasParquetFiles(store, ONEVISION)) ? 'onevision' : 'release';
}

/** The ALLaVA-4V files present at the root; a cheap existence check each, instead of listing 700k images. */
async function presentFiles(store: ObjectStore): Promise<string[]> {
  const present = await Promise.all(ALLAVA_FILES.map((file) => store.exists(file)));
  const files = ALLAVA_FILES.filter((_, i) => present[i]);
  if (files.length === 0) throw new SourceError(store.root, `no ALLaVA-4V file found (${await describeRoot(store, ALLAVA_FILES)}); ${EXPECTED}`);
  return files;
}
