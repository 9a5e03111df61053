/**
 * ChartQA as the Hugging Face Hub ships it, Parquet with the charts inside (sources/readers/hfRows.ts):
 *   HuggingFaceM4/ChartQA   data/{train,val,test}-*.parquet   image: Image, query, label: list<string>,
 *                                                             human_or_machine: ClassLabel(human, machine)
 *   lmms-lab/ChartQA        data/test-*.parquet               type (human_test, augmented_test), question, answer, image: Image
 *   ahmed-masry/ChartQA     data/{split}-*.parquet            imgname, query, label, type (human, augmented), image: binary
 * (their dataset cards' `dataset_info`). The columns are detected; `splits` picks the files, `sets`
 * the rows (machine-written questions are ChartQA's augmented set). No data tables ship with them.
 */
import type { SourceConfigOf } from '../../config/sourceConfig.js';
import type { ObjectStore } from '../../storage/objectStore.js';
import { filtered, sourceSample, type SourceItem } from '../contract.js';
import { firstText, parquetRows, requireParquetFiles } from '../readers/hfRows.js';
import { cleanQuestion } from '../questions.js';
import { chartLabel } from '../referenceAnswers.js';

type ChartqaConfig = SourceConfigOf<'chartqa'>;

/** The set (human or augmented) a row says it is in, undefined when it does not say. */
function setOf(values: Record<string, unknown>): string | undefined {
  const label = values.human_or_machine;
  if (typeof label === 'number' || typeof label === 'bigint') return Number(label) === 0 ? 'human' : 'augmented';
  const type = values.type;
  if (typeof type === 'string') return type.startsWith('human') ? 'human' : type.startsWith('augmented') ? 'augmented' : undefined;
  return undefined;
}

export async function* chartqaHubItems(store: ObjectStore, config: ChartqaConfig, sourceIndex: number): AsyncGenerator<SourceItem> {
  const files = await requireParquetFiles(store, { splits: config.splits });
  for await (const row of parquetRows(store, files, {}, ['human_or_machine', 'type'])) {
    if ('problem' in row) {
      yield row;
      continue;
    }
    const { sourceId, values, map } = row;
    const set = setOf(values);
    if (set && !(config.sets as readonly string[]).includes(set)) {
      yield filtered(sourceId, `set-${set}`, `${sourceId}: in the ${set} set, not among sets ${config.sets.join(', ')}`);
      continue;
    }
    const query = map.question === undefined ? undefined : firstText(values[map.question]);
    if (query === undefined) {
      yield filtered(sourceId, 'no-question', `${sourceId}: no question in the row`);
      continue;
    }
    const verdict = cleanQuestion(query, config.question);
    if (!verdict.ok) {
      yield filtered(sourceId, verdict.reason, `${sourceId}: ${verdict.detail}`);
      continue;
    }
    const rawLabel = map.answer === undefined ? undefined : firstText(values[map.answer]);
    const label = rawLabel === undefined ? undefined : chartLabel(rawLabel, query);
    if (label && !label.ok) {
      yield filtered(sourceId, label.filter, `${sourceId}: ${label.detail}`);
      continue;
    }
    yield sourceSample('chartqa', sourceId, config.licenseNote, { sourceIndex, locator: row.locator }, { originalInstruction: verdict.question, originalAnswer: label?.answer });
  }
}
