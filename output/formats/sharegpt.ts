/**
 * LLaMA-Factory's sharegpt layout (the format MMIF-23k was released in): `<image>` in the human
 * turn, image paths relative to the dataset root; DPO records add `chosen` and `rejected`.
 *
 * LLaMA-Factory loads these files with `datasets.load_dataset("json")`, which infers one Arrow
 * schema per file (and per block of a file) and then casts every later table to the first one. A
 * column whose type depends on the row (verifier params that are numbers in one row and lists in
 * another, a null that is a string elsewhere, a pass rate of 1 beside 0.8) fails that cast. So every
 * column here has one type whatever the record: strings, the turn structs, a list of paths, and the
 * rest of the record as JSON text in `metadata` (the same record the Parquet shards hold).
 */
import { IMAGE_TOKEN, type DpoRecord, type InstructRecord } from '../contracts/records.js';

interface Turn {
  from: 'human' | 'gpt';
  value: string;
}

export interface InstructSharegptRow {
  id: string;
  conversations: [Turn, Turn];
  images: [string];
  /** JSON text: the record's other fields. */
  metadata: string;
}

export interface DpoSharegptRow {
  id: string;
  conversations: [Turn];
  chosen: Turn;
  rejected: Turn;
  images: [string];
  metadata: string;
}

const userTurn = (prompt: string): Turn => ({ from: 'human', value: `${IMAGE_TOKEN}\n${prompt}` });

export function instructSharegptLine(r: InstructRecord): string {
  const { id, prompt, answer, image_path, ...meta } = r;
  const row: InstructSharegptRow = {
    id,
    conversations: [userTurn(prompt), { from: 'gpt', value: answer }],
    images: [image_path],
    metadata: JSON.stringify(meta),
  };
  return JSON.stringify(row);
}

export function dpoSharegptLine(r: DpoRecord): string {
  const { id, prompt, chosen, rejected, image_path, ...meta } = r;
  const row: DpoSharegptRow = {
    id,
    conversations: [userTurn(prompt)],
    chosen: { from: 'gpt', value: chosen },
    rejected: { from: 'gpt', value: rejected },
    images: [image_path],
    metadata: JSON.stringify(meta),
  };
  return JSON.stringify(row);
}

const promptOf = (turn: Turn): string => turn.value.slice(IMAGE_TOKEN.length + 1);

/** The record a line was written from (for `mmif inspect` and `mmif export`). */
export function instructRecordFromLine(line: string): InstructRecord {
  const row = JSON.parse(line) as InstructSharegptRow;
  const [user, reply] = row.conversations;
  return {
    ...(JSON.parse(row.metadata) as Omit<InstructRecord, 'id' | 'prompt' | 'answer' | 'image_path'>),
    id: row.id,
    prompt: promptOf(user),
    answer: reply.value,
    image_path: row.images[0],
  };
}

export function dpoRecordFromLine(line: string): DpoRecord {
  const row = JSON.parse(line) as DpoSharegptRow;
  return {
    ...(JSON.parse(row.metadata) as Omit<DpoRecord, 'id' | 'prompt' | 'chosen' | 'rejected' | 'image_path'>),
    id: row.id,
    prompt: promptOf(row.conversations[0]),
    chosen: row.chosen.value,
    rejected: row.rejected.value,
    image_path: row.images[0],
  };
}

export function jsonl(lines: readonly string[]): string {
  return lines.map((l) => `${l}\n`).join('');
}

/**
 * LLaMA-Factory's dataset registry for the build root (`dataset_dir` = the build root), with every
 * key its parser reads (`src/llamafactory/data/parser.py`, `DatasetAttr.join`): a `columns` object
 * replaces every column default, so `messages` is named; a `tags` object replaces every tag default,
 * so the four tags these rows use are named. `ranking: true` makes the DPO entry a preference set:
 * its `conversations` hold the prompt turn only, `chosen` and `rejected` one `gpt` turn each.
 */
export function llamaFactoryDatasetInfo(folders = { instruct: 'instruct/sharegpt', dpo: 'dpo/sharegpt' }): Record<string, unknown> {
  return sharegptRegistry({ sft: ['mmif_instruct', folders.instruct], dpo: ['mmif_dpo', folders.dpo], system: false });
}

/** LLaMA-Factory's dataset_info.json entries of a multiturn build (output/formats/chatFormats.ts writes its rows). */
export function chatDatasetInfo(): Record<string, unknown> {
  return sharegptRegistry({ sft: ['mmif_chat', 'chat/sharegpt'], dpo: ['mmif_chat_dpo', 'chat-dpo/sharegpt'], system: true });
}

/** An SFT and a preference entry (name, folder) of the registry; `system`: their rows have a `system` column. */
function sharegptRegistry({ sft, dpo, system }: { sft: [string, string]; dpo: [string, string]; system: boolean }): Record<string, unknown> {
  const tags = { role_tag: 'from', content_tag: 'value', user_tag: 'human', assistant_tag: 'gpt' };
  const systemColumn = system ? { system: 'system' } : {};
  return {
    [sft[0]]: {
      file_name: sft[1],
      formatting: 'sharegpt',
      columns: { messages: 'conversations', ...systemColumn, images: 'images' },
      tags,
    },
    [dpo[0]]: {
      file_name: dpo[1],
      formatting: 'sharegpt',
      ranking: true,
      columns: { messages: 'conversations', chosen: 'chosen', rejected: 'rejected', ...systemColumn, images: 'images' },
      tags,
    },
  };
}
