/**
 * MultiUI (neulab/MultiUI, gated): webpage screenshots with LLaVA conversations; the task type in
 * each record id decides what is kept. The reader is reader.ts.
 */
import { z } from 'zod';
import { QUESTIONS, SCREEN_CONSTRAINTS, questionSchema, relativePath } from '../../config/sourceFields.js';
import { defineSource } from '../definition.js';

/** The JSON arrays neulab/MultiUI ships (docs/sources.md cites where the names come from). */
export const RELEASE_FILES = ['stage1_data.json', 'stage2_data_to_be_combined_with_general_data.json'] as const;

export const multiuiDefinition = defineSource({
  type: 'multiui',
  fields: {
    /** LLaVA-style JSON arrays relative to the root; by default the two the release ships (RELEASE_FILES). */
    files: z
      .array(relativePath)
      .min(1)
      .default([...RELEASE_FILES]),
    /** Task types (read from each record's id) kept; the others are dropped and counted. */
    keepTasks: z
      .array(z.string().regex(/^[a-z][a-z0-9_]*$/, 'a task type such as webqa'))
      .min(1)
      .default(['webqa', 'embed_qa', 'meta_generate']),
    question: questionSchema(QUESTIONS),
  },
  defaults: {
    dedupe: 'image+question',
    licenseNote: 'MultiUI: ODC-BY per its dataset card; webpage screenshots owned by their sites (see dataset card)',
    // Full-page screenshots are tall; at 1024 px their text would be unreadable.
    image: { maxAspectRatio: 6, maxLongSide: 2048 },
    constraintTypes: SCREEN_CONSTRAINTS,
    question: QUESTIONS,
  },
  docs: {
    layout: `LLaVA-style JSON arrays (\`{id, image, conversations}\`) named in \`files\`, by default the release's ${RELEASE_FILES.map((f) => `\`${f}\``).join(' and ')}, screenshots at the paths they name under the root, or all of it in split \`multiui.tar.gz.NN\` parts (extracted once at planning); the task type is in \`id\``,
    instruction:
      "kept tasks' question, refined; grounding and OCR items (`title_identification` is OCR) dropped and counted; `[x1, y1, x2, y2]` boxes removed from reference answers",
    hub: ['neulab/MultiUI', 'yuanshengni/MultiUI'],
  },
});
