/**
 * ALLaVA-4V (FreedomIntelligence/ALLaVA-4V): LLaVA conversation JSON arrays with their images under
 * the root; the first human turn is the question. The reader is reader.ts.
 */
import { z } from 'zod';
import { QUESTIONS, layoutField, questionSchema, relativePath } from '../../config/sourceFields.js';
import { defineSource } from '../definition.js';

export const allavaDefinition = defineSource({
  type: 'allava',
  fields: {
    /** `release`: the JSON arrays with images under the root or in its zip chunks; `onevision`: the LLaVA-OneVision Parquet copy (its `allava_...` configs); 'auto' detects. */
    layout: layoutField(['release', 'onevision']),
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
      '`allava_laion/ALLaVA-{Instruct,Caption}-LAION-4V.json`, `allava_vflan/ALLaVA-{Instruct,Caption}-VFLAN-4V.json`: single JSON arrays of `{id, image, conversations, original_caption?, url?}` (parsed as a stream), image paths relative to the root, the images unpacked or in `allava_laion/image_chunks/images_<n>.zip` as the Hub ships them (read in place: a path that is not a file is found in the zips by folder or file name); or the LLaVA-OneVision Parquet copy, `allava_instruct_laion4v/`, `allava_instruct_vflan4v/` `train-*.parquet` (`id`, `image: Image`, `conversations`)',
    instruction: 'first human turn, cleaned, refined',
    hub: ['FreedomIntelligence/ALLaVA-4V', 'mvp-lab/LLaVA-OneVision-1.5-Instruct-Data (allava_instruct_laion4v, allava_instruct_vflan4v)'],
  },
});
