/** One evaluation set of a build's `decontaminate` list (pipeline/decontamination.ts reads it). */
import { z } from 'zod';
import { slug } from './slug.js';

/**
 * `vlmevalkit-tsv`: VLMEvalKit's benchmark TSV (how MM-IFEval and MIA-Bench ship): a header row with
 * `index`, `image` (base64 JPEG/PNG) and `question`. `jsonl`: one JSON object per line with `index`
 * (or `id`), `image` (a path relative to the file's folder) and `question` (or `instruction`).
 */
const DECONTAMINATION_FORMATS = ['vlmevalkit-tsv', 'jsonl'] as const;

export const decontaminationSetSchema = z
  .object({
    /** The set's file: a local path or s3:// URI. */
    uri: z.string().min(1),
    format: z.enum(DECONTAMINATION_FORMATS),
    /** Names the set in rejection reasons (`contaminated: <name> <index>`) and the card. */
    name: slug,
  })
  .strict();
export type DecontaminationSet = z.output<typeof decontaminationSetSchema>;
