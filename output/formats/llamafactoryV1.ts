/**
 * LLaMA-Factory v1's "Messages format" (PR #10656; `llamafactory/v1/utils/types.py` in the PyPI
 * package): a message is `{role, content: [{type, value}], loss_weight}`, a content part `text` or
 * `image_url` (here the image's path relative to the dataset root, as the v0 sharegpt rows name it);
 * an SFT sample is `{messages}`, a DPO sample `{chosen_messages, rejected_messages}` (each the whole
 * conversation, prompt included), with `extra_info` as text. The prompt turn weighs 0, the answers 1
 * (the weights its own converters give: v1/plugins/data_plugins/converter.py). Each sample's
 * `extra_info` holds its id and ground truth (domain/groundTruth.ts). A registration YAML
 * per file set (v1/core/data_engine.py reads `{name: {path, source: local}}`; paths relative to the
 * dataset root, where the trainer is started) sits beside the v0 dataset_info.json.
 */
import type { DpoRecord, InstructRecord } from '../contracts/records.js';
import type { GroundTruth } from '../../domain/groundTruth.js';

interface Part {
  type: 'text' | 'image_url';
  value: string;
}
interface Message {
  role: 'user' | 'assistant';
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

/** The registration YAML of one dataset (its folder relative to the dataset root). */
export function llamaFactoryV1Registration(name: string, folder: string): string {
  return `${name}:\n  path: ${folder}\n  source: local\n`;
}
