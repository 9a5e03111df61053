/**
 * A folder of images: Hugging Face's ImageFolder layout (images beside `metadata.jsonl`, `.csv` or
 * `.parquet` naming them in `file_name`, optionally under split folders), or plain images with no
 * metadata. The reader is reader.ts.
 */
import { z } from 'zod';
import { QUESTIONS, layoutField, questionSchema } from '../../config/sourceFields.js';
import { defineSource } from '../definition.js';

const column = z.string().min(1);

export const imagefolderDefinition = defineSource({
  type: 'imagefolder',
  fields: {
    /** metadata: images named by `metadata.*` files; images: every image file under the root; auto: metadata when there is any. */
    layout: layoutField(['metadata', 'images']),
    /** Split folders read (`train`, `test`...: the first folder of a path); absent: all of the root. */
    splits: z
      .array(z.string().regex(/^[^/\\]+$/, 'a folder name under the root'))
      .min(1)
      .optional(),
    /** Metadata columns holding each text; absent: detected (caption: `caption`, `text`; question: `question`, `query`; answer: `answer`). */
    columns: z.object({ caption: column.optional(), question: column.optional(), answer: column.optional() }).strict().optional(),
    question: questionSchema(QUESTIONS),
  },
  defaults: {
    dedupe: 'image+question',
    licenseNote: 'Images and texts of a local folder: licence as their owner states (set licenseNote)',
    image: {},
    question: QUESTIONS,
  },
  docs: {
    layout:
      "`metadata`: [ImageFolder](https://huggingface.co/docs/datasets/image_dataset#imagefolder) images beside `metadata.jsonl`, `metadata.csv` or `metadata.parquet` whose `file_name` is relative to the metadata file's folder, at the root or in split folders (`train/`, `test/`...); `images`: every image file under the root, with no metadata; `layout: auto` picks `metadata` when a metadata file exists. A metadata row naming a path outside the root, a directory, a missing file or a file the OS cannot stat or name (not UTF-8) is a source problem of that row alone",
    instruction: 'the `question` (or `query`) column, cleaned and refined, with `answer` as the reference; without one, generated, with `caption` (or `text`) as grounding',
    hub: ['any Hub repository in the ImageFolder layout (e.g. hf-internal-testing/imagefolder_with_metadata)', 'your own folders'],
  },
});
