/**
 * Any LLaVA-style instruction data: JSON arrays or JSON lines of `{id, image, conversations}` with
 * the images under the root (LLaVA-665k's `llava_v1_5_mix665k.json`, ShareGPT4V, Cambrian's `*.jsonl`).
 * The reader is reader.ts.
 */
import { z } from 'zod';
import { QUESTIONS, questionSchema, relativePath } from '../../config/sourceFields.js';
import { defineSource } from '../definition.js';

export const llavaDefinition = defineSource({
  type: 'llava',
  fields: {
    /** JSON arrays (`.json`) or JSON lines (`.jsonl`) relative to the root; absent: every such file at the root. */
    files: z.array(relativePath).min(1).optional(),
    /** The folder under the root the records' `image` paths are relative to ('' is the root). */
    imageDir: z
      .string()
      .refine((p) => !p.startsWith('/') && !p.split('/').includes('..') && !p.includes('\\'), 'must be a folder under the dataset root, without ".."')
      .default(''),
    question: questionSchema(QUESTIONS),
  },
  defaults: {
    dedupe: 'image+question',
    licenseNote: 'LLaVA-style data: licence of the images and annotations as their release states (see its dataset card)',
    image: {},
    question: QUESTIONS,
  },
  docs: {
    layout:
      'LLaVA-style records `{id, image, conversations: [{from: "human"|"user", value}, {from: "gpt"|"assistant", value}...]}` in JSON arrays (`*.json`, streamed) or JSON lines (`*.jsonl`) named in `files` (absent: every `.json`/`.jsonl` at the root), images under `imageDir` (default the root); a text-only record (no `image`) is filtered as `no-image`',
    instruction: 'the first human turn without `<image>`, cleaned and refined; the first gpt turn after it is kept as the reference answer',
    hub: ['liuhaotian/LLaVA-Instruct-150K (llava_v1_5_mix665k.json)', 'Lin-Chen/ShareGPT4V', 'nyu-visionx/Cambrian-10M (*.jsonl)'],
  },
});
