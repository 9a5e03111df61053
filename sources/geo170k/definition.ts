/**
 * Geo170K (G-LLaVA): geometry diagrams with multiple-choice QA in LLaVA conversations; the stem is
 * kept and refined, option letters become the option's text. The reader is reader.ts.
 */
import { z } from 'zod';
import { QUESTIONS, STRUCTURE_CONSTRAINTS, layoutField, questionSchema, relativePath } from '../../config/sourceFields.js';
import { defineSource } from '../definition.js';

// Every Geo170K question is multiple choice: keep the stem, the refinement stage makes it open.
const QUESTION = { ...QUESTIONS, dropMultipleChoice: false };

export const geo170kDefinition = defineSource({
  type: 'geo170k',
  fields: {
    /** `release`: the JSON arrays with images under images/ or in images.zip; `onevision`: LLaVA-OneVision-Data's geo170k(qa)/(align) Parquet; 'auto' detects. */
    layout: layoutField(['release', 'onevision']),
    /** LLaVA-style JSON arrays relative to the root (also: alignment.json); with `onevision`, the matching configs geo170k(qa), geo170k(align). */
    files: z.array(relativePath).min(1).default(['qa_tuning.json']),
    question: questionSchema(QUESTION),
  },
  defaults: {
    dedupe: 'image+question',
    licenseNote: 'Geo170K: licence not declared by its authors; diagrams from GeoQA+ and Geometry3K (see dataset card)',
    // Small black-on-white line drawings: little variance, short sides well under 224, some long strips.
    image: { minShortSide: 64, maxAspectRatio: 6, minChannelStdDev: 2 },
    // Precision, maths, format and length; no roleplay, tone or style rewrites of a proof.
    constraintTypes: [...STRUCTURE_CONSTRAINTS, 'precision', 'scientific_notation'],
    question: QUESTION,
  },
  docs: {
    layout:
      "`qa_tuning.json` / `alignment.json` (LLaVA conversations), diagrams under `images/` or in `images.zip` beside them (read in place, as `Luckyjhg/Geo170K` ships them); or LLaVA-OneVision-Data's `geo170k(qa)/` and `geo170k(align)/` `train-*.parquet` (`id`, `image: Image`, `conversations`, `data_source`)",
    instruction:
      'the stem without the preamble ("First perform reasoning...", "Based on the image, directly select the correct answer for the following question:") and `Choices:` block, refined; the answer\'s option letters (`the answer is: C.` / `Answer:C`) become the option\'s text',
    hub: ['Luckyjhg/Geo170K', 'lmms-lab/LLaVA-OneVision-Data (geo170k(qa), geo170k(align))'],
  },
});
