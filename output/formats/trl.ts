/**
 * TRL's vision conventions, as Parquet with the images inside (the layout of `trl-lib/rlaif-v`):
 * DPO rows `{images, prompt, chosen, rejected}` and SFT rows `{images, messages}`, where every message
 * is `{role, content: [{type: "image"} | {type: "text", text}]}` with one image part per image.
 * DPOTrainer applies the processor's chat template to `prompt`/`chosen`/`rejected` and passes
 * `images` to the processor; SFTTrainer does the same with `messages`. Arrow needs one struct for
 * every content part, so an image part carries `text: null`, as in rlaif-v.
 */
import type { FieldDefinition } from '@dsnp/parquetjs';
import type { DpoRecord, InstructRecord } from '../contracts/records.js';
import { imageField, parquetTable, text, writeParquet, type ImageBytes } from './parquet.js';

const messages: FieldDefinition = { repeated: true, fields: { role: text, content: { repeated: true, fields: { type: text, text } } } };
/**
 * A Parquet LIST (optional list of optional items), not a bare repeated group: `datasets` (3.x and
 * later) honours a declared feature only when its Arrow field equals the file's, and `List(Image())`
 * is a nullable list of nullable `{bytes, path}` structs, which a bare repeated group (non-nullable
 * list, non-nullable items) is not. So declared this way, `load_dataset` yields PIL images.
 */
export const imageListField: FieldDefinition = {
  type: 'LIST',
  optional: true,
  fields: { list: { repeated: true, fields: { element: imageField } } },
};
/** The list form datasets 2.x/3.x write for a list of features; datasets 4 and 5 read it as `List(Image())`. */
export const IMAGE_LIST_FEATURES = { images: [{ _type: 'Image' }] };
const dpoTable = parquetTable({ id: text, images: imageListField, prompt: messages, chosen: messages, rejected: messages }, IMAGE_LIST_FEATURES);
const sftTable = parquetTable({ id: text, images: imageListField, messages }, IMAGE_LIST_FEATURES);

interface TrlPart {
  type: 'image' | 'text';
  text?: string;
}
type Part = TrlPart;
export interface TrlMessage {
  role: 'system' | 'user' | 'assistant';
  content: Part[];
}
type Message = TrlMessage;

function trlUserTurn(prompt: string, imageCount: number): Message {
  return { role: 'user', content: [...Array.from({ length: imageCount }, (): Part => ({ type: 'image' })), { type: 'text', text: prompt }] };
}

/** The row value of the LIST column: the writer shreds the three levels as written. */
export const imageList = <R extends Pick<InstructRecord, 'image_sha256' | 'image_path'>>(r: R, imageBytes: (r: R) => Buffer) => ({
  list: [{ element: { bytes: imageBytes(r), path: r.image_path } }],
});

const assistantTurn = (answer: string): Message => ({ role: 'assistant', content: [{ type: 'text', text: answer }] });

export function trlSftParquet(records: readonly InstructRecord[], imageBytes: ImageBytes): Promise<Buffer> {
  const rows = records.map((r) => ({
    id: r.id,
    images: imageList(r, imageBytes),
    messages: [trlUserTurn(r.prompt, 1), assistantTurn(r.answer)],
  }));
  return writeParquet(sftTable, rows);
}

export function trlDpoParquet(records: readonly DpoRecord[], imageBytes: ImageBytes): Promise<Buffer> {
  const rows = records.map((r) => ({
    id: r.id,
    images: imageList(r, imageBytes),
    prompt: [trlUserTurn(r.prompt, 1)],
    chosen: [assistantTurn(r.chosen)],
    rejected: [assistantTurn(r.rejected)],
  }));
  return writeParquet(dpoTable, rows);
}

/** An image of a multi-turn row, with the path it has in the dataset. */
export interface TrlImage {
  bytes: Buffer;
  path: string;
}

/** Multi-turn SFT rows (output/formats/chatFormats.ts): the SFT table, with every turn's messages. */
export function trlChatSftParquet(rows: ReadonlyArray<{ id: string; image: TrlImage; messages: Message[] }>): Promise<Buffer> {
  return writeParquet(
    sftTable,
    rows.map((r) => ({ id: r.id, images: { list: [{ element: r.image }] }, messages: r.messages })),
  );
}

/** Turn-level pairs: `prompt` is the chat up to the turn, conversational as DPOTrainer takes it. */
export function trlChatDpoParquet(rows: ReadonlyArray<{ id: string; image: TrlImage; prompt: Message[]; chosen: Message[]; rejected: Message[] }>): Promise<Buffer> {
  return writeParquet(
    dpoTable,
    rows.map((r) => ({ id: r.id, images: { list: [{ element: r.image }] }, prompt: r.prompt, chosen: r.chosen, rejected: r.rejected })),
  );
}
