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
import { sourceStore } from '../readers/extractedView.js';
import type { S3Options } from '../../storage/s3Store.js';
import type { SourceSample } from '../../domain/sample.js';
import { damaged, filtered, lazySegment, segmentOf, sourceSample, type SourceProblem, type SourceReader, type SourceSegment } from '../contract.js';
import { firstExchange } from '../readers/conversations.js';
import { describeMapping } from '../readers/hfColumns.js';
import { hubSnapshot, type HfFileFilter } from '../readers/hfDataset.js';
import { openParquetTable } from '../readers/hfParquet.js';
import { firstText, parquetImages, parquetRuns, requireParquetFiles, tableMapping, type ParquetRowRecord, type ParquetRun } from '../readers/hfRows.js';
import { cleanQuestion } from '../questions.js';

type ParquetConfig = SourceConfigOf<'parquet'>;

export function open(config: ParquetConfig, sourceIndex: number, s3: S3Options): SourceReader {
  const store = sourceStore(config.uri, s3);
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

/**
 * A segment per run of row groups: no async step per row. A row's image path and texts are screened
 * here (a dropped question is a filtered record) from the run's columns; its record and sample are
 * built, and its texts taken again, only when planning keeps its rank (lazySegment): nothing per row
 * outlives the screen but its source id (ADR 0071).
 */
async function* segments(store: ObjectStore, config: ParquetConfig, sourceIndex: number, filter: HfFileFilter): AsyncGenerator<SourceSegment> {
  for await (const run of parquetRuns(store, await requireParquetFiles(store, filter), config.columns)) {
    if ('problem' in run) {
      yield segmentOf([run]);
      continue;
    }
    const records: SourceSegment['records'] = [];
    const kept: number[] = [];
    for (const entry of run.entries) {
      const unreadable = typeof entry === 'number' ? run.imageProblem(entry) : entry;
      if (unreadable) {
        records.push(unreadable);
        continue;
      }
      const row = entry as number;
      const sourceId = run.sourceId(row);
      const texts = rowTexts(run, row, sourceId, config.question);
      if ('problem' in texts) records.push(texts);
      else {
        records.push(sourceId);
        kept.push(row);
      }
    }
    yield lazySegment('parquet', records, (i) => toSample(run, kept[i]!, config, sourceIndex));
  }
}

function columnText(run: ParquetRun, column: string | undefined, row: number): string | undefined {
  return column === undefined ? undefined : firstText(run.value(column, row));
}

type RowTexts = { question?: string; answer?: string; caption?: string };

/** The texts a row's mapped columns give, or why the row is dropped. */
export function rowTexts(run: ParquetRun, row: number, sourceId: string, policy: QuestionPolicy): RowTexts | SourceProblem {
  const { map } = run;
  let question: string | undefined;
  let answer: string | undefined;
  if (map.conversations !== undefined) {
    const exchange = firstExchange(run.value(map.conversations, row));
    if (typeof exchange === 'string') return damaged(sourceId, 'bad-conversation', `${sourceId}: ${exchange}`);
    ({ question, answer } = exchange);
  } else {
    question = columnText(run, map.question, row);
    answer = columnText(run, map.answer, row)?.trim();
  }
  const caption = columnText(run, map.text, row);
  if (question === undefined) return { caption };
  const verdict = cleanQuestion(question, policy);
  if (!verdict.ok) return filtered(sourceId, verdict.reason, `${sourceId}: ${verdict.detail}`);
  return { question: verdict.question, answer, caption };
}

function toSample(run: ParquetRun, row: number, config: ParquetConfig, sourceIndex: number): SourceSample {
  const record = run.record(row) as ParquetRowRecord;
  const texts = rowTexts(run, row, record.sourceId, config.question) as RowTexts;
  return sourceSample(
    'parquet',
    record.sourceId,
    config.licenseNote,
    { sourceIndex, locator: record.locator },
    { originalInstruction: texts.question, originalAnswer: texts.answer || undefined, caption: texts.caption },
  );
}
