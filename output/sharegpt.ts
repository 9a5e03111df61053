/**
 * LLaMA-Factory's sharegpt layout (the format MMIF-23k was released in): `<image>` in the human
 * turn, image paths relative to the dataset root; DPO records add `chosen` and `rejected`.
 */
import type { DpoRecord, InstructRecord } from './records.js';

export function instructSharegptLine(r: InstructRecord): string {
  const { prompt, answer, image_path, ...meta } = r;
  return JSON.stringify({
    conversations: [
      { from: 'human', value: `<image>\n${prompt}` },
      { from: 'gpt', value: answer },
    ],
    images: [image_path],
    ...meta,
  });
}

export function dpoSharegptLine(r: DpoRecord): string {
  const { prompt, chosen, rejected, image_path, ...meta } = r;
  return JSON.stringify({
    conversations: [{ from: 'human', value: `<image>\n${prompt}` }],
    chosen: { from: 'gpt', value: chosen },
    rejected: { from: 'gpt', value: rejected },
    images: [image_path],
    ...meta,
  });
}

export function jsonl(lines: readonly string[]): string {
  return lines.map((l) => `${l}\n`).join('');
}

/** LLaMA-Factory's dataset registry for the build root (`dataset_dir` = the build root). */
export function llamaFactoryDatasetInfo(): Record<string, unknown> {
  return {
    mmif_instruct: {
      file_name: 'instruct/sharegpt',
      formatting: 'sharegpt',
      columns: { messages: 'conversations', images: 'images' },
    },
    mmif_dpo: {
      file_name: 'dpo/sharegpt',
      formatting: 'sharegpt',
      ranking: true,
      columns: { messages: 'conversations', chosen: 'chosen', rejected: 'rejected', images: 'images' },
    },
  };
}
