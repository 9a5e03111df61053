/**
 * LLaMA-Factory v1's "Messages format" (PR #10656; `llamafactory/v1/utils/types.py`): a message is
 * `{role, content: [{type, value}], loss_weight}`, a part `text` or `image_url` (the image's path
 * relative to the dataset root, as the v0 sharegpt rows name it); an SFT sample is `{messages}`, a DPO
 * sample `{chosen_messages, rejected_messages}` (each the whole conversation), `extra_info` as text
 * holding the id and ground truth (domain/groundTruth.ts). The prompt turn weighs 0, answers 1 (as
 * v1/plugins/data_plugins/converter.py gives them). A registration YAML per file set (v1/core/
 * data_engine.py reads `{name: {path, source: local}}`) sits beside the v0 dataset_info.json. A
 * multiturn chat is one SFT sample (the image in the first turn) with each instructed turn's ground
 * truth; a turn-level pair one DPO sample with its turn's.
 */
import type { DpoRecord, InstructRecord } from '../contracts/records.js';
import type { ChatConversation, ChatPairConversation, Exchange } from './chatFormats.js';
import type { GroundTruth } from '../../domain/groundTruth.js';

interface Part {
  type: 'text' | 'image_url';
  value: string;
}
interface Message {
  role: 'system' | 'user' | 'assistant';
  content: Part[];
  loss_weight: number;
}

const promptTurn = (r: InstructRecord | DpoRecord): Message => ({
  role: 'user',
  content: [
    { type: 'image_url', value: r.image_path },
    { type: 'text', value: r.prompt },
  ],
  loss_weight: 0,
});
const answerTurn = (answer: string): Message => ({ role: 'assistant', content: [{ type: 'text', value: answer }], loss_weight: 1 });
const extraInfo = (id: string, truth: GroundTruth): string => JSON.stringify({ id, ground_truth: truth });

export function llamaFactoryV1SftLine(r: InstructRecord, truth: GroundTruth): string {
  return JSON.stringify({ messages: [promptTurn(r), answerTurn(r.answer)], extra_info: extraInfo(r.id, truth) });
}

export function llamaFactoryV1DpoLine(r: DpoRecord, truth: GroundTruth): string {
  return JSON.stringify({
    chosen_messages: [promptTurn(r), answerTurn(r.chosen)],
    rejected_messages: [promptTurn(r), answerTurn(r.rejected)],
    extra_info: extraInfo(r.id, truth),
  });
}

const imagePart = (path: string): Part => ({ type: 'image_url', value: path });
const textTurn = (role: 'system' | 'user', text: string): Message => ({ role, content: [{ type: 'text', value: text }], loss_weight: 0 });

/** A chat's exchanges as messages: its system message, then each turn asked (the image opening the first) and answered. */
function chatMessages(system: string, imagePath: string, exchanges: readonly Exchange[]): Message[] {
  return [
    textTurn('system', system),
    ...exchanges.flatMap((e, i) => {
      const user = textTurn('user', e.user);
      if (i === 0) user.content.unshift(imagePart(imagePath));
      return e.answer === undefined ? [user] : [user, answerTurn(e.answer)];
    }),
  ];
}

/** A multiturn chat: the whole conversation, and the ground truth of each turn with an instruction in force. */
export function llamaFactoryV1ChatLine(chat: ChatConversation, truths: ReadonlyArray<{ turn: number; truth: GroundTruth }>): string {
  return JSON.stringify({ messages: chatMessages(chat.system, chat.image_path, chat.exchanges), extra_info: JSON.stringify({ id: chat.id, ground_truths: truths }) });
}

/** A turn-level pair: the chat up to its turn with each answer; the ground truth of that turn. */
export function llamaFactoryV1ChatPairLine(pair: ChatPairConversation, truth: GroundTruth): string {
  const prompt = chatMessages(pair.system, pair.image_path, pair.exchanges);
  return JSON.stringify({
    chosen_messages: [...prompt, answerTurn(pair.chosen)],
    rejected_messages: [...prompt, answerTurn(pair.rejected)],
    extra_info: extraInfo(pair.id, truth),
  });
}

/** The registration YAML of one dataset (its folder relative to the dataset root). */
export function llamaFactoryV1Registration(name: string, folder: string): string {
  return `${name}:\n  path: ${folder}\n  source: local\n`;
}
