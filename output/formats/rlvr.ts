/**
 * open-instruct's RLVR rows (the layout of allenai/RLVR-IFeval, read by open-instruct's GRPO script
 * and its `ground_truth_utils` verifiers): `messages` (the user turn, its content a string as there), `ground_truth` (text), `dataset`
 * (which verifier scores the row), `constraint_type` and `constraint`; plus `images` as in the TRL rows
 * (a `List(Image())` column), since these prompts are about an image; TRL's
 * `prepare_multimodal_messages` puts the image part before a string prompt's text. A row carries all of a sample's
 * constraints: `constraint_type` and `constraint` list them one per line, and `ground_truth` is the
 * JSON text of domain/groundTruth.ts (`dataset: "mmif"` names the service that scores it:
 * `mmif reward serve`, docs/rl-rewards.md). A multiturn build's chat gives a row per turn with an
 * instruction in force: the conversation up to that turn's question, and the turn's ground truth.
 */
import type { InstructRecord } from '../contracts/records.js';
import { chatTurnTruths, type GroundTruth } from '../../domain/groundTruth.js';
import type { VacuousPolicy } from '../../domain/verdict.js';
import type { ChatConversation } from './chatFormats.js';
import { parquetTable, text, writeParquet } from './parquet.js';
import { IMAGE_LIST_FEATURES, imageList, imageListField } from './trl.js';

const RLVR_DATASET = 'mmif';

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

/** One RL prompt: its id, source, the conversation up to the question to answer, its image and ground truth. */
export interface RlvrPrompt {
  id: string;
  source: string;
  messages: Array<{ role: 'system' | 'user' | 'assistant'; content: string }>;
  image: Pick<InstructRecord, 'image_sha256' | 'image_path'>;
  truth: GroundTruth;
}

/** A single-turn record's prompt. */
export const recordPrompt = (r: InstructRecord, truth: GroundTruth): RlvrPrompt => ({
  id: r.id,
  source: r.source,
  messages: [{ role: 'user', content: r.prompt }],
  image: r,
  truth,
});

/**
 * A chat's prompts, one per turn with an instruction in force (domain/groundTruth.ts
 * `chatTurnTruths`): the answers' system message, the earlier turns as asked and answered, and the
 * turn's user message (its instruction before its question), as the build's answer was generated.
 */
export function chatPrompts(chat: ChatConversation, vacuous: VacuousPolicy): RlvrPrompt[] {
  return chatTurnTruths(chat, vacuous).map(({ turn, truth }) => {
    const index = chat.turns.findIndex((t) => t.turn === turn);
    const earlier = chat.exchanges.slice(0, index).flatMap((e) => [
      { role: 'user' as const, content: e.user },
      { role: 'assistant' as const, content: e.answer ?? '' },
    ]);
    return {
      id: truth.id,
      source: chat.source,
      messages: [{ role: 'system', content: chat.system }, ...earlier, { role: 'user', content: chat.exchanges[index]!.user }],
      image: chat,
      truth,
    };
  });
}

export function rlvrParquet(prompts: readonly RlvrPrompt[], imageBytes: (r: RlvrPrompt['image']) => Buffer): Promise<Buffer> {
  return writeParquet(
    rlvrTable,
    prompts.map(({ id, messages, image, truth }) => ({
      id,
      messages,
      images: imageList(image, imageBytes),
      ground_truth: JSON.stringify(truth),
      dataset: RLVR_DATASET,
      constraint_type: truth.constraints.map((c) => c.type).join('\n'),
      constraint: truth.constraints.map((c) => c.text).join('\n'),
    })),
  );
}
