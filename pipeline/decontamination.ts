/**
 * Loads a build's evaluation sets (`decontaminate`) into one index per worker, and rejects samples
 * that copy them (domain/decontamination.ts says what a copy is). The index is loaded once per
 * process and config, at planning first, so a missing or malformed set fails the build at once. Each
 * set format (config/decontaminationConfig.ts) is read by its own function below, which cites it.
 */
import type { BuildConfig } from '../config/buildConfig.js';
import type { DecontaminationSet } from '../config/decontaminationConfig.js';
import { contaminationReason, EvalSetIndex, type Contamination, type EvalItemRef, type Fingerprint, type NearMiss } from '../domain/decontamination.js';
import { sha256Hex } from '../domain/hashing.js';
import { SampleRejection } from '../domain/rejection.js';
import { imageFingerprint } from '../image/perceptualHash.js';
import { asObject } from '../sources/readers/jsonFiles.js';
import { tsvRows } from '../sources/readers/tsv.js';
import { StoreError, type ObjectStore } from '../storage/objectStore.js';
import { openFileStore } from '../storage/openStore.js';
import { DecontaminationSetError } from './decontaminationSetError.js';

const indexes = new Map<string, Promise<EvalSetIndex>>();

/** The index of the build's evaluation sets (undefined without `decontaminate`), loaded once per worker. */
export function evalSetIndex(config: Pick<BuildConfig, 'decontaminate' | 's3'>): Promise<EvalSetIndex> | undefined {
  if (!config.decontaminate?.length) return undefined;
  const id = JSON.stringify([config.decontaminate, config.s3]);
  let index = indexes.get(id);
  if (!index) {
    index = loadIndex(config.decontaminate, config.s3);
    index.catch(() => indexes.delete(id));
    indexes.set(id, index);
  }
  return index;
}

/**
 * Rejects a sample whose image (raw bytes) or texts copy an evaluation item. Returns the evaluation
 * images its image came close to without being the same picture (near misses: kept, listed in the
 * quality report); a short question matches only on such an image (`near`, or the image's own).
 */
export async function rejectIfContaminated(
  config: Pick<BuildConfig, 'decontaminate' | 's3'>,
  input: { image?: Buffer; texts: ReadonlyArray<string | undefined>; near?: readonly EvalItemRef[] },
): Promise<NearMiss[]> {
  const index = await evalSetIndex(config);
  if (!index) return [];
  const image = input.image ? index.matchImage(sha256Hex(input.image), await imageFingerprint(input.image)) : { nearMisses: [] };
  const near = [...(input.near ?? []), ...image.nearMisses];
  const match = image.match ?? input.texts.reduce<Contamination | undefined>((found, text) => found ?? (text ? index.matchText(text, near) : undefined), undefined);
  if (match) throw new SampleRejection(contaminationReason(match));
  return image.nearMisses;
}

async function loadIndex(sets: readonly DecontaminationSet[], s3: BuildConfig['s3']): Promise<EvalSetIndex> {
  const index = new EvalSetIndex();
  for (const set of sets) {
    const { store, key } = openFileStore(set.uri, s3);
    const where = `decontaminate '${set.name}' (${set.uri})`;
    let stream: NodeJS.ReadableStream;
    try {
      stream = await store.openRead(key);
    } catch (err) {
      if (err instanceof StoreError && err.code === 'not-found') throw new DecontaminationSetError(`${where}: file not found`);
      throw err;
    }
    const items = set.format === 'vlmevalkit-tsv' ? tsvItems(stream, where) : jsonlItems(stream, where);
    for await (const item of items) await addItem(index, { name: set.name, index: item.index }, item, store, where);
    if (!index.items[set.name]) throw new DecontaminationSetError(`${where}: no item in it`);
  }
  return index;
}

/** One evaluation item as read: its images as bytes (TSV) or paths (JSONL), and its question. */
interface RawItem {
  index: string;
  row: number;
  images: Array<{ bytes: Buffer } | { path: string }>;
  question?: string;
}

async function addItem(index: EvalSetIndex, ref: EvalItemRef, item: RawItem, store: ObjectStore, where: string): Promise<void> {
  index.addItem(ref);
  if (item.question) index.addQuestion(ref, item.question);
  for (const image of item.images) {
    const bytes = 'bytes' in image ? image.bytes : await store.get(image.path);
    if (!bytes) throw new DecontaminationSetError(`${where} line ${item.row}: image '${'path' in image ? image.path : ''}' not found`);
    let fingerprint: Fingerprint;
    try {
      fingerprint = await imageFingerprint(bytes);
    } catch (err) {
      throw new DecontaminationSetError(`${where} row ${item.row} (index ${item.index}): the image is not a readable image (${(err as Error).message})`);
    }
    index.addImage(ref, sha256Hex(bytes), fingerprint);
  }
}

/**
 * `vlmevalkit-tsv`: VLMEvalKit's benchmark file, a TSV with a header row holding `index`, `image` and
 * `question` (open-compass/VLMEvalKit docs/en/Development.md, "TSV data file preparation"; read with
 * pandas `read_csv(sep='\t')` in vlmeval/smp/file.py `load`). `image` is a base64 JPEG or PNG, a
 * Python list of them (several images), or (64 characters at most) the `index` of another row whose
 * image it shares (VLMEvalKit's `dump_image` resolves it the same way).
 */
async function* tsvItems(stream: NodeJS.ReadableStream, where: string): AsyncGenerator<RawItem> {
  let columns: Record<string, number> | undefined;
  let row = 0;
  for await (const fields of tsvRows(stream as AsyncIterable<Buffer>)) {
    row += 1;
    if (!columns) {
      columns = Object.fromEntries(fields.map((name, i) => [name.trim(), i]));
      const missing = ['index', 'image', 'question'].filter((c) => columns![c] === undefined);
      if (missing.length > 0) throw new DecontaminationSetError(`${where}: the header row lacks ${missing.join(', ')} (VLMEvalKit's TSV has index, image, question)`);
      continue;
    }
    if (fields.length === 1 && fields[0] === '') continue; // a blank line
    const index = fields[columns.index!] ?? '';
    const image = fields[columns.image!] ?? '';
    // A short value names the row whose image this one shares: that image is already indexed.
    const images = image.length <= 64 ? [] : base64Images(image).map((b64) => ({ bytes: Buffer.from(b64, 'base64') }));
    yield { index, row, images, question: fields[columns.question!] };
  }
}

/** The base64 images of a TSV `image` field: one, or a Python list literal of several. */
function base64Images(field: string): string[] {
  if (!field.startsWith('[')) return [field];
  return [...field.matchAll(/'([^']*)'|"([^"]*)"/g)].map((m) => m[1] ?? m[2]!);
}

/** `jsonl`: one object per line, `index` (or `id`), `image` (a path relative to the file's folder, or a list of them) and `question` (or `instruction`). */
async function* jsonlItems(stream: NodeJS.ReadableStream, where: string): AsyncGenerator<RawItem> {
  let text = '';
  for await (const chunk of stream as AsyncIterable<Buffer>) text += chunk.toString('utf8');
  for (const [i, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    let value: Record<string, unknown> | undefined;
    try {
      value = asObject(JSON.parse(line));
    } catch {
      value = undefined;
    }
    const index = value?.index ?? value?.id;
    const image = value?.image;
    const paths = typeof image === 'string' ? [image] : Array.isArray(image) && image.every((p) => typeof p === 'string') ? (image as string[]) : undefined;
    const question = value?.question ?? value?.instruction;
    if (!value || (typeof index !== 'string' && typeof index !== 'number') || !paths || (question !== undefined && typeof question !== 'string')) {
      throw new DecontaminationSetError(`${where} line ${i + 1}: expected {index (or id), image: path or [paths], question (or instruction)}`);
    }
    yield { index: String(index), row: i + 1, images: paths.map((path) => ({ path })), question: question as string | undefined };
  }
}
