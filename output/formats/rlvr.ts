/**
 * open-instruct's RLVR rows (the layout of allenai/RLVR-IFeval, read by open-instruct's GRPO script
 * and its `ground_truth_utils` verifiers): `messages` (the user turn, its content a string as there), `ground_truth` (text), `dataset`
 * (which verifier scores the row), `constraint_type` and `constraint`; plus `images` as in the TRL rows
 * (a `List(Image())` column), since these prompts are about an image; TRL's
 * `prepare_multimodal_messages` puts the image part before a string prompt's text. A row carries all of a sample's
 * constraints: `constraint_type` and `constraint` list them one per line, and `ground_truth` is the
 * JSON text of domain/groundTruth.ts (`dataset: "mmif"` names the service that scores it:
 * `mmif reward serve`, docs/rl-rewards.md).
 */
import type { InstructRecord } from '../contracts/records.js';
import type { GroundTruth } from '../../domain/groundTruth.js';
import { parquetTable, text, writeParquet, type ImageBytes } from './parquet.js';
import { IMAGE_LIST_FEATURES, imageList, imageListField } from './trl.js';

export const RLVR_DATASET = 'mmif';

const rlvrTable = parquetTable(
  {
    id: text,
    messages: { repeated: true, fields: { role: text, content: text } },
    images: imageListField,
    ground_truth: text,
    dataset: text,
    constraint_type: text,
    constraint: text,
  },
  IMAGE_LIST_FEATURES,
);

export function rlvrParquet(records: readonly InstructRecord[], truth: (r: InstructRecord) => GroundTruth, imageBytes: ImageBytes): Promise<Buffer> {
  return writeParquet(
    rlvrTable,
    records.map((r) => {
      const gt = truth(r);
      return {
        id: r.id,
        messages: [{ role: 'user', content: r.prompt }],
        images: imageList(r, imageBytes),
        ground_truth: JSON.stringify(gt),
        dataset: RLVR_DATASET,
        constraint_type: gt.constraints.map((c) => c.type).join('\n'),
        constraint: gt.constraints.map((c) => c.text).join('\n'),
      };
    }),
  );
}
