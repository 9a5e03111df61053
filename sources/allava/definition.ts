/**
 * ALLaVA-4V (FreedomIntelligence/ALLaVA-4V): LLaVA conversation JSON arrays with their images under
 * the root; the first human turn is the question. The reader is reader.ts.
 */
import { z } from 'zod';
import { QUESTIONS, questionSchema, relativePath } from '../../config/sourceFields.js';
import { defineSource } from '../definition.js';

export const allavaDefinition = defineSource({
  type: 'allava',
  fields: {
    /** JSON arrays relative to the root; absent: the ALLaVA-4V files (LAION and Vision-FLAN, Instruct and Caption) present at the root. */
    files: z.array(relativePath).min(1).optional(),
    question: questionSchema(QUESTIONS),
  },
  defaults: {
    dedupe: 'image+question',
    licenseNote: 'ALLaVA-4V: images owned by third parties (LAION, Vision-FLAN sources); GPT-4V annotations Apache-2.0 per the dataset card',
    image: {},
    question: QUESTIONS,
  },
  docs: {
    layout:
      '`allava_laion/ALLaVA-{Instruct,Caption}-LAION-4V.json`, `allava_vflan/ALLaVA-{Instruct,Caption}-VFLAN-4V.json`: single JSON arrays of `{id, image, conversations, original_caption?, url?}` (parsed as a stream), image paths relative to the root',
    instruction: 'first human turn, cleaned, refined',
    hub: ['FreedomIntelligence/ALLaVA-4V'],
  },
});
