/**
 * verl's RL prompt rows, as its multimodal recipes write them (volcengine/verl
 * examples/data_preprocess/geo3k.py): `data_source`, `prompt` (chat messages whose text holds the
 * `<image>` placeholder), `images`, `ability`, `reward_model: {style, ground_truth}` and `extra_info`
 * (`index`, `split`, here also the record id). verl's `RLHFDataset` (verl/utils/dataset/rl_dataset.py)
 * reads the files with `datasets.load_dataset("parquet")`, splits each message's text on `<image>`
 * into image and text parts (`_build_messages`) and decodes `images` (vision_utils.process_image);
 * its reward manager passes `data_source`, the response, `reward_model.ground_truth` and `extra_info`
 * to `compute_score`. `ground_truth` is the JSON text of domain/groundTruth.ts: its verifier
 * arguments differ in type from row to row, which one Parquet struct could not hold.
 */
import type { InstructRecord } from '../contracts/records.js';
import type { GroundTruth } from '../../domain/groundTruth.js';
import { IMAGE_TOKEN } from '../contracts/records.js';
import { parquetTable, text, writeParquet, type ImageBytes } from './parquet.js';
import { IMAGE_LIST_FEATURES, imageList, imageListField } from './trl.js';

const verlTable = parquetTable(
  {
    data_source: text,
    prompt: { repeated: true, fields: { role: text, content: text } },
    images: imageListField,
    ability: text,
    reward_model: { optional: true, fields: { style: text, ground_truth: text } },
    extra_info: { optional: true, fields: { id: text, index: { type: 'INT64', optional: true }, split: text, source: text } },
  },
  IMAGE_LIST_FEATURES,
);

/** The verl `data_source` of a record: one per build source, so verl's metrics split by source. */
export const verlDataSource = (source: string): string => `mmif/${source}`;

/** One shard's prompts; `first`: the index of its first row over the whole export (verl's `extra_info.index`). */
export function verlParquet(records: readonly InstructRecord[], truth: (r: InstructRecord) => GroundTruth, imageBytes: ImageBytes, first: number): Promise<Buffer> {
  return writeParquet(
    verlTable,
    records.map((r, i) => ({
      data_source: verlDataSource(r.source),
      prompt: [{ role: 'user', content: `${IMAGE_TOKEN}${r.prompt}` }],
      images: imageList(r, imageBytes),
      ability: 'instruction_following',
      reward_model: { style: 'rule', ground_truth: JSON.stringify(truth(r)) },
      extra_info: { id: r.id, index: first + i, split: 'train', source: r.source },
    })),
  );
}
