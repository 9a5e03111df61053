/**
 * Hugging Face Parquet (definition.ts): the rows of the files the splits and configs keep
 * (sources/readers/hfRows.ts), each a sample whose texts come from the mapped columns: LLaVA
 * `conversations` give the question and answer (the first human turn and the reply after it), else
 * `question` and `answer`; `text` is a caption, grounding for a generated instruction. A Hub cache
 * snapshot root is named with its repository and revision by describe().
 */
import type { SourceConfigOf } from '../../config/sourceConfig.js';
import type { QuestionPolicy } from '../../config/sourceFields.js';
import type { ObjectStore } from '../../storage/objectStore.js';
import { openStore } from '../../storage/openStore.js';
import type { S3Options } from '../../storage/s3Store.js';
import { damaged, filtered, segmentOf, sourceSample, type SourceItem, type SourceReader, type SourceSegment } from '../contract.js';
import { firstExchange } from '../readers/conversations.js';
import { describeMapping } from '../readers/hfColumns.js';
import { hubSnapshot, type HfFileFilter } from '../readers/hfDataset.js';
import { openParquetTable } from '../readers/hfParquet.js';
import { firstText, parquetImages, parquetRuns, requireParquetFiles, tableMapping, type ParquetRowRecord } from '../readers/hfRows.js';
import { cleanQuestion } from '../questions.js';

type ParquetConfig = SourceConfigOf<'parquet'>;

export function open(config: ParquetConfig, sourceIndex: number, s3: S3Options): SourceReader {
  const store = openStore(config.uri, s3);
  const images = parquetImages(store);
  const filter = { splits: config.splits, configs: config.configs };
  return {
    segments: () => segments(store, config, sourceIndex, filter),
    readImage: (ref) => images.read(ref.locator),
    origin: images.origin,
    describe: () => describeParquet(store, filter, config.columns),
  };
}

/** `<n> files (splits ...), mapping image ← ..., question ← ...` and the Hub revision when the root is a cache snapshot. */
export async function describeParquet(store: ObjectStore, filter: HfFileFilter, columns: ParquetConfig['columns']): Promise<string> {
  const files = await requireParquetFiles(store, filter);
  const first = files[0]!;
  const map = tableMapping(store, await openParquetTable(store, first.key, first.size), columns);
  const splits = [...new Set(files.map((f) => (f.config === 'default' ? f.split : `${f.config}/${f.split}`)))].join(', ');
  const snapshot = hubSnapshot(store.root);
  const hub = snapshot ? `; Hub snapshot ${snapshot.repo}@${snapshot.revision}` : '';
  return `Parquet: ${files.length} file(s) (${splits}); columns ${describeMapping(map, columns)}${hub}`;
}

/** A segment per run of row groups (~16k rows): no async step per row. */
async function* segments(store: ObjectStore, config: ParquetConfig, sourceIndex: number, filter: HfFileFilter): AsyncGenerator<SourceSegment> {
  for await (const run of parquetRuns(store, await requireParquetFiles(store, filter), config.columns)) {
    yield segmentOf(run.map((row) => ('problem' in row ? row : toItem(row, config, sourceIndex))));
  }
}

/** The texts a row's mapped columns give, or why the row is dropped. */
export function rowTexts(row: ParquetRowRecord, policy: QuestionPolicy): { question?: string; answer?: string; caption?: string } | SourceItem {
  const { map, values, sourceId } = row;
  let question: string | undefined;
  let answer: string | undefined;
  if (map.conversations !== undefined) {
    const exchange = firstExchange(values[map.conversations]);
    if (typeof exchange === 'string') return damaged(sourceId, 'bad-conversation', `${sourceId}: ${exchange}`);
    ({ question, answer } = exchange);
  } else {
    question = map.question === undefined ? undefined : firstText(values[map.question]);
    answer = map.answer === undefined ? undefined : firstText(values[map.answer])?.trim();
  }
  const caption = map.text === undefined ? undefined : firstText(values[map.text]);
  if (question === undefined) return { caption };
  const verdict = cleanQuestion(question, policy);
  if (!verdict.ok) return filtered(sourceId, verdict.reason, `${sourceId}: ${verdict.detail}`);
  return { question: verdict.question, answer, caption };
}

function toItem(row: ParquetRowRecord, config: ParquetConfig, sourceIndex: number): SourceItem {
  const texts = rowTexts(row, config.question);
  if ('sourceId' in texts) return texts;
  return sourceSample(
    'parquet',
    row.sourceId,
    config.licenseNote,
    { sourceIndex, locator: row.locator },
    { originalInstruction: texts.question, originalAnswer: texts.answer || undefined, caption: texts.caption },
  );
}
