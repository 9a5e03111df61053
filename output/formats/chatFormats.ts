/**
 * A multiturn build's chats and turn-level pairs in the single-turn formats (seed 002 data).
 * LLaMA-Factory sharegpt (chat/sharegpt, chat-dpo/sharegpt): a chat is one row whose `conversations`
 * alternate human/gpt, `<image>` once at the start of the first human turn; a pair is a ranking row of
 * the chat up to its turn with one gpt turn each in `chosen`/`rejected`; `system` holds the answers'
 * system message, the rest of the record (verdicts, PIF) is JSON text in `metadata` (one type per
 * column: output/formats/sharegpt.ts). Parquet for `datasets` (chat/parquet, chat-dpo/parquet): the
 * same rows with the image inside, and the provenance columns the single-turn tables have. TRL (`mmif export --format trl`): SFT `{images, messages}`, DPO
 * `{images, prompt, chosen, rejected}` in the conversational form, `prompt` the chat up to the turn.
 */
import type { FieldDefinition } from '@dsnp/parquetjs';
import { flag, imageField, parquetTable, text, writeParquet, type ParquetTable } from './parquet.js';
import { IMAGE_TOKEN, type ChatPairRecord, type ChatRecord } from '../contracts/records.js';
import type { TrlMessage } from './trl.js';

interface Turn {
  from: 'human' | 'gpt';
  value: string;
}

/** The human turn of chat turn `t`: its instruction (if any) before its question, as it was asked. */
function userText(turn: { question: string; instruction: string | null }): string {
  return turn.instruction ? `${turn.instruction}\n\n${turn.question}` : turn.question;
}

export interface ChatSharegptRow {
  id: string;
  system: string;
  /** human, gpt, human, gpt, ...: one pair per question turn. */
  conversations: Turn[];
  images: [string];
  metadata: string;
}

export interface ChatPairSharegptRow {
  id: string;
  system: string;
  /** The chat up to the pair's turn: human, gpt, ..., human. */
  conversations: Turn[];
  chosen: Turn;
  rejected: Turn;
  images: [string];
  metadata: string;
}

/** What opens the first human turn of a written chat: the image token and a line break. */
const IMAGE_LEAD = `${IMAGE_TOKEN}\n`;

/** The text of written turn `i` as the user typed it: the first human turn without its IMAGE_LEAD. */
const typedText = (t: Turn, i: number): string => (i === 0 ? t.value.slice(IMAGE_LEAD.length) : t.value);

/** The human/gpt turns of a chat's history; IMAGE_LEAD opens the first human turn. */
function conversation(turns: ReadonlyArray<{ question: string; instruction: string | null; answer?: string }>): Turn[] {
  return turns.flatMap((t, i) => {
    const human: Turn = { from: 'human', value: i === 0 ? `${IMAGE_LEAD}${userText(t)}` : userText(t) };
    return t.answer === undefined ? [human] : [human, { from: 'gpt', value: t.answer }];
  });
}

export function chatSharegptRow(r: ChatRecord): ChatSharegptRow {
  const { id, system, image_path, turns, ...meta } = r;
  // Questions, instructions and answers are in `conversations`; the metadata keeps each turn's verdicts and PIF.
  const turnMeta = turns.map(({ question: _q, answer: _a, ...rest }) => rest);
  return { id, system, conversations: conversation(turns), images: [image_path], metadata: JSON.stringify({ ...meta, turns: turnMeta }) };
}

export function chatPairSharegptRow(r: ChatPairRecord): ChatPairSharegptRow {
  const { id, system, image_path, history, question, instruction, chosen, rejected, ...meta } = r;
  return {
    id,
    system,
    conversations: conversation([...history, { question, instruction }]),
    chosen: { from: 'gpt', value: chosen },
    rejected: { from: 'gpt', value: rejected },
    images: [image_path],
    metadata: JSON.stringify(meta),
  };
}

/** A chat exchange as written: the user's text (instruction before question, no image token) and the answer, absent for the question a pair answers. */
export interface Exchange {
  user: string;
  answer?: string;
}

function exchangesOf(conversations: readonly Turn[]): Exchange[] {
  const exchanges: Exchange[] = [];
  for (const [i, t] of conversations.entries()) {
    if (t.from === 'human') exchanges.push({ user: typedText(t, i) });
    else exchanges.at(-1)!.answer = t.value;
  }
  return exchanges;
}

/** What the RL exports read of a written chat line: its exchanges, its instructions and the turns they were verified at. */
export type ChatConversation = Pick<ChatRecord, 'id' | 'source' | 'system' | 'image_path' | 'image_sha256' | 'instructions'> & {
  turns: Array<{ turn: number }>;
  exchanges: Exchange[];
};

export function chatConversationFromLine(line: string): ChatConversation {
  const row = JSON.parse(line) as ChatSharegptRow;
  const meta = JSON.parse(row.metadata) as Pick<ChatRecord, 'source' | 'image_sha256' | 'instructions'> & { turns: Array<{ turn: number }> };
  return {
    id: row.id,
    source: meta.source,
    system: row.system,
    image_path: row.images[0],
    image_sha256: meta.image_sha256,
    instructions: meta.instructions,
    turns: meta.turns,
    exchanges: exchangesOf(row.conversations),
  };
}

/** What the RL exports read of a written turn-level pair line: the chat up to its turn, both answers, and which chat turn it is. */
export type ChatPairConversation = Pick<ChatPairRecord, 'id' | 'system' | 'image_path' | 'chat_id' | 'turn' | 'chosen' | 'rejected'> & { exchanges: Exchange[] };

export function chatPairConversationFromLine(line: string): ChatPairConversation {
  const row = JSON.parse(line) as ChatPairSharegptRow;
  const meta = JSON.parse(row.metadata) as Pick<ChatPairRecord, 'chat_id' | 'turn'>;
  return {
    id: row.id,
    system: row.system,
    image_path: row.images[0],
    chat_id: meta.chat_id,
    turn: meta.turn,
    chosen: row.chosen.value,
    rejected: row.rejected.value,
    exchanges: exchangesOf(row.conversations),
  };
}

export const chatSharegptLine = (r: ChatRecord): string => JSON.stringify(chatSharegptRow(r));
export const chatPairSharegptLine = (r: ChatPairRecord): string => JSON.stringify(chatPairSharegptRow(r));

// Parquet for `datasets`: the sharegpt row with the image bytes in place of the path list, and the
// record's provenance in columns of their own (as instruct/dpo have them), so a filter by source,
// licence or simulated output needs no JSON parse.
const turnList: FieldDefinition = { repeated: true, fields: { from: text, value: text } };
const turnStruct: FieldDefinition = { optional: true, fields: { from: text, value: text } };
const provenance = { source: text, source_id: text, license: text, image_sha256: text, simulated: flag };
type Provenance = Pick<ChatRecord, 'source' | 'source_id' | 'license' | 'image_sha256' | 'simulated'>;
const provenanceOf = ({ source, source_id, license, image_sha256, simulated }: Provenance): Provenance => ({ source, source_id, license, image_sha256, simulated });
const chatTable = parquetTable({ id: text, image: imageField, system: text, conversations: turnList, metadata: text, ...provenance }, { image: { _type: 'Image' } });
const pairTable = parquetTable(
  { id: text, image: imageField, system: text, conversations: turnList, chosen: turnStruct, rejected: turnStruct, metadata: text, ...provenance },
  { image: { _type: 'Image' } },
);
/** The chat Parquet columns past the sharegpt row's (the dataset card names each). */
export const CHAT_PROVENANCE_COLUMNS = Object.keys(provenance);

/** How the records of one kind become Parquet rows: their table and their sharegpt row. */
interface ChatParquetForm<R> {
  table: ParquetTable;
  row: (record: R) => { images: [string] };
}
export const CHAT_ROWS: ChatParquetForm<ChatRecord> = { table: chatTable, row: chatSharegptRow };
export const CHAT_PAIR_ROWS: ChatParquetForm<ChatPairRecord> = { table: pairTable, row: chatPairSharegptRow };

/** Chats or turn-level pairs as Parquet: their sharegpt rows with the image's bytes in place of its path list. */
export function chatParquet<R extends Provenance>(form: ChatParquetForm<R>, records: readonly R[], imageBytes: (r: R) => Buffer): Promise<Buffer> {
  return writeParquet(
    form.table,
    records.map((r) => {
      const { images, ...row } = form.row(r);
      return { ...row, image: { bytes: imageBytes(r), path: images[0] }, ...provenanceOf(r) };
    }),
  );
}

// TRL (`mmif export --format trl`), made from the sharegpt rows as written.
const textMessage = (role: TrlMessage['role'], value: string): TrlMessage => ({ role, content: [{ type: 'text', text: value }] });

/** The sharegpt turns as TRL messages: the image part leads the first user message in place of `<image>`. */
function trlMessages(system: string, turns: readonly Turn[]): TrlMessage[] {
  return [
    textMessage('system', system),
    ...turns.map((t, i): TrlMessage => {
      if (t.from === 'gpt') return textMessage('assistant', t.value);
      const message = textMessage('user', typedText(t, i));
      return i === 0 ? { ...message, content: [{ type: 'image' }, ...message.content] } : message;
    }),
  ];
}

/** A written chat line as TRL's SFT messages; `imagePath` is relative to the dataset root. */
export function trlChatRow(line: string): { id: string; imagePath: string; messages: TrlMessage[] } {
  const row = JSON.parse(line) as ChatSharegptRow;
  return { id: row.id, imagePath: row.images[0], messages: trlMessages(row.system, row.conversations) };
}

/** A written turn-level pair line as TRL's conversational preference row. */
export function trlChatPairRow(line: string): { id: string; imagePath: string; prompt: TrlMessage[]; chosen: TrlMessage[]; rejected: TrlMessage[] } {
  const row = JSON.parse(line) as ChatPairSharegptRow;
  return {
    id: row.id,
    imagePath: row.images[0],
    prompt: trlMessages(row.system, row.conversations),
    chosen: [textMessage('assistant', row.chosen.value)],
    rejected: [textMessage('assistant', row.rejected.value)],
  };
}
