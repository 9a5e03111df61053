/**
 * LLaVA-style conversation records, the format ALLaVA, Geo170K and MultiUI share:
 *   { id, image: "<path under the image folder>", conversations: [{ from: "human", value }, { from: "gpt", value }, ...] }
 * stored as JSON arrays or JSON lines (`.jsonl`). The first human turn is the dataset's question (cleaned by questions.ts),
 * the first gpt turn after it is its answer. Each source only says where its files and images are,
 * and which records its own policy drops.
 */
import type { QuestionPolicy } from '../../config/sourceFields.js';
import type { SourceType } from '../registry.js';
import type { ImageLocator, SourceSample } from '../../domain/sample.js';
import type { ObjectStore } from '../../storage/objectStore.js';
import { damaged, filtered, sourceSample, type SourceItem } from '../contract.js';
import { datasetKey } from './datasetPath.js';
import { asObject, jsonRecords, requireFiles, type JsonRecord } from './jsonFiles.js';
import { cleanQuestion } from '../questions.js';
import { pathLocator } from './namedImages.js';
import type { HfParquetFile } from './hfDataset.js';
import { parquetRows } from './hfRows.js';

/** How a source turns LLaVA records into samples, wherever they are stored. */
export interface LlavaPolicy {
  source: SourceType;
  licenseNote: string;
  sourceIndex: number;
  question: QuestionPolicy;
  /** A policy drop decided from the record's id (MultiUI's task types): the filter key and why. */
  screen?: (id: string | undefined) => { filter: string; reason: string } | undefined;
  /**
   * The dataset's answer made fit to be a reference (Geo170K's option letters, MultiUI's boxes), given the
   * raw question it answers; undefined when nothing usable is left.
   */
  reference?: (answer: string, rawQuestion: string) => string | undefined;
  /** Source-specific text kept with the sample (ALLaVA's LAION alt text). */
  extras?: (record: Record<string, unknown>) => Pick<SourceSample, 'caption' | 'grounding'>;
}

/** LLaVA records in JSON arrays, their images named by path. */
export interface LlavaSource extends LlavaPolicy {
  store: ObjectStore;
  /** JSON arrays relative to the root, read in this order. */
  files: readonly string[];
  /** Folder the records' image paths are relative to: '' for the root. */
  imageDir: string;
  /** The layout, for error messages. */
  expected: string;
}

const HUMAN = new Set(['human', 'user']);
const ASSISTANT = new Set(['gpt', 'assistant']);

export async function* llavaItems(source: LlavaSource): AsyncGenerator<SourceItem> {
  await requireFiles(source.store, source.files, source.expected);
  for (const file of source.files) {
    for await (const record of jsonRecords(source.store, file, source.expected)) {
      yield 'problem' in record ? record : toItem(record, source);
    }
  }
}

/**
 * sourceId is `<file>#<index>:<id>`: the position makes it unique even where a dataset repeats an
 * id, the id lets a reader find the record by grep.
 */
function toItem({ file, index, value }: JsonRecord, source: LlavaSource): SourceItem {
  const record = asObject(value);
  if (!record) return damaged(`${file}#${index}`, 'not-an-object', `${file}#${index}: not a JSON object`);
  const id = typeof record.id === 'string' || typeof record.id === 'number' ? String(record.id) : undefined;
  const sourceId = id === undefined ? `${file}#${index}` : `${file}#${index}:${id}`;

  if (record.image === undefined) return filtered(sourceId, 'no-image', `${sourceId}: a text-only record`);
  if (typeof record.image !== 'string') return damaged(sourceId, 'image-not-a-path', `${sourceId}: image is not a path: ${JSON.stringify(record.image).slice(0, 80)}`);
  const key = datasetKey(source.imageDir, record.image);
  if (key === undefined) return damaged(sourceId, 'outside-root', `${sourceId}: image path '${record.image}' leaves the dataset root; not read`);
  return conversationItem(source, sourceId, id, record, pathLocator(key));
}

/** A LLaVA record whose image is found (`locator`): its first exchange, screened, cleaned and kept as a sample. */
function conversationItem(source: LlavaPolicy, sourceId: string, id: string | undefined, record: Record<string, unknown>, locator: ImageLocator): SourceItem {
  const exchange = firstExchange(record.conversations);
  if (typeof exchange === 'string') return damaged(sourceId, 'bad-conversation', `${sourceId}: ${exchange}`);

  const drop = source.screen?.(id);
  if (drop) return filtered(sourceId, drop.filter, `${sourceId}: ${drop.reason}`);
  const verdict = cleanQuestion(exchange.question, source.question);
  if (!verdict.ok) return filtered(sourceId, verdict.reason, `${sourceId}: ${verdict.detail}`);

  return sourceSample(
    source.source,
    sourceId,
    source.licenseNote,
    { sourceIndex: source.sourceIndex, locator },
    {
      originalInstruction: verdict.question,
      originalAnswer: exchange.answer === undefined || !source.reference ? exchange.answer : source.reference(exchange.answer, exchange.question),
      ...source.extras?.(record),
    },
  );
}

/**
 * The same records as Parquet (LLaVA-OneVision-Data's `<config>/train-*.parquet`: `id`, `image: Image`,
 * `conversations`, `data_source`), images in the table (hfRows.ts): what the JSON arrays give, one
 * row each.
 */
export async function* llavaParquetItems(source: LlavaPolicy, store: ObjectStore, files: readonly HfParquetFile[]): AsyncGenerator<SourceItem> {
  for await (const row of parquetRows(store, files, { conversations: 'conversations' })) {
    if ('problem' in row) {
      yield row;
      continue;
    }
    const id = row.map.id === undefined ? undefined : row.values[row.map.id];
    const record = { conversations: row.values.conversations };
    yield conversationItem(source, row.sourceId, typeof id === 'string' || typeof id === 'number' ? String(id) : undefined, record, row.locator);
  }
}

/** The first human turn and the first assistant turn after it, or what is wrong with the conversation. */
export function firstExchange(conversations: unknown): { question: string; answer?: string } | string {
  if (!Array.isArray(conversations)) return 'no conversations array';
  const turns = conversations.map(asObject);
  const q = turns.findIndex((t) => t !== undefined && HUMAN.has(String(t.from)));
  if (q === -1) return 'no human turn in the conversation';
  const question = turns[q]!.value;
  if (typeof question !== 'string') return `human turn #${q} has no text`;
  const answer = turns.find((t, i) => i > q && t !== undefined && ASSISTANT.has(String(t.from)))?.value;
  return typeof answer === 'string' ? { question, answer: answer.trim() } : { question };
}
