/**
 * verl's RL prompt rows, as its multimodal recipes write them (volcengine/verl
 * examples/data_preprocess/geo3k.py): `data_source`, `prompt` (chat messages whose text holds the
 * `<image>` placeholder), `images`, `ability`, `reward_model: {style, ground_truth}` and `extra_info`
 * (`index`, `split`, here also the record id). verl's `RLHFDataset` (verl/utils/dataset/rl_dataset.py)
 * reads the files with `datasets.load_dataset("parquet")`, splits each message's text on `<image>`
 * into image and text parts (`_build_messages`) and decodes `images` (vision_utils.process_image);
 * its reward manager passes `data_source`, the response, `reward_model.ground_truth` and `extra_info`
 * to `compute_score`. `ground_truth` is the JSON text of domain/groundTruth.ts. A row is an RL prompt
 * (rlvr.ts): a chat turn's carries the system message and earlier turns, the placeholder in its first
 * user message, where the chat's image was sent.
 */
import { IMAGE_TOKEN } from '../contracts/records.js';
import { parquetTable, text, writeParquet } from './parquet.js';
import type { RlvrPrompt } from './rlvr.js';
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
const verlDataSource = (source: string): string => `mmif/${source}`;

/** One shard's prompts; `first`: the index of its first row over the whole export (verl's `extra_info.index`). */
export function verlParquet(prompts: readonly RlvrPrompt[], imageBytes: (r: RlvrPrompt['image']) => Buffer, first: number): Promise<Buffer> {
  return writeParquet(
    verlTable,
    prompts.map((p, i) => {
      const firstUser = p.messages.findIndex((m) => m.role === 'user');
      return {
        data_source: verlDataSource(p.source),
        prompt: p.messages.map((m, j) => ({ role: m.role, content: j === firstUser ? `${IMAGE_TOKEN}${m.content}` : m.content })),
        images: imageList(p.image, imageBytes),
        ability: 'instruction_following',
        reward_model: { style: 'rule', ground_truth: JSON.stringify(p.truth) },
        extra_info: { id: p.id, index: first + i, split: 'train', source: p.source },
      };
    }),
  );
}
