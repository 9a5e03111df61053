/**
 * TRL's vision conventions, as Parquet with the images inside (the layout of `trl-lib/rlaif-v`):
 * DPO rows `{images, prompt, chosen, rejected}` and SFT rows `{images, messages}`, where every message
 * is `{role, content: [{type: "image"} | {type: "text", text}]}` with one image part per image.
 * DPOTrainer applies the processor's chat template to `prompt`/`chosen`/`rejected` and passes
 * `images` to the processor; SFTTrainer does the same with `messages`. Arrow needs one struct for
 * every content part, so an image part carries `text: null`, as in rlaif-v. No `datasets` features are
 * declared: `datasets` honours a declaration only when it equals the Arrow field, and a Parquet repeated
 * group's items are non-nullable where `List(Image())` is nullable, so `load_dataset` yields `{bytes,
 * path}` dicts and the README's one-line cast makes them images.
 */
import parquet, { type FieldDefinition } from 'parquetjs-lite';
import type { DpoRecord, InstructRecord } from './records.js';
import { writeParquet, type ImageBytes } from './parquet.js';

const text: FieldDefinition = { type: 'UTF8', optional: true, compression: 'GZIP' };
const messages: FieldDefinition = { repeated: true, fields: { role: text, content: { repeated: true, fields: { type: text, text } } } };
const images: FieldDefinition = { repeated: true, fields: { bytes: { type: 'BYTE_ARRAY', optional: true }, path: { type: 'UTF8', optional: true } } };

const dpoSchema = new parquet.ParquetSchema({ id: text, images, prompt: messages, chosen: messages, rejected: messages });
const sftSchema = new parquet.ParquetSchema({ id: text, images, messages });

interface Part {
  type: 'image' | 'text';
  text?: string;
}
interface Message {
  role: 'user' | 'assistant';
  content: Part[];
}

export function trlUserTurn(prompt: string, imageCount: number): Message {
  return { role: 'user', content: [...Array.from({ length: imageCount }, (): Part => ({ type: 'image' })), { type: 'text', text: prompt }] };
}

const assistantTurn = (answer: string): Message => ({ role: 'assistant', content: [{ type: 'text', text: answer }] });

export function trlSftParquet(records: readonly InstructRecord[], imageBytes: ImageBytes): Promise<Buffer> {
  const rows = records.map((r) => ({
    id: r.id,
    images: [{ bytes: imageBytes(r), path: r.image_path }],
    messages: [trlUserTurn(r.prompt, 1), assistantTurn(r.answer)],
  }));
  return writeParquet(sftSchema, rows);
}

export function trlDpoParquet(records: readonly DpoRecord[], imageBytes: ImageBytes): Promise<Buffer> {
  const rows = records.map((r) => ({
    id: r.id,
    images: [{ bytes: imageBytes(r), path: r.image_path }],
    prompt: [trlUserTurn(r.prompt, 1)],
    chosen: [assistantTurn(r.chosen)],
    rejected: [assistantTurn(r.rejected)],
  }));
  return writeParquet(dpoSchema, rows);
}
