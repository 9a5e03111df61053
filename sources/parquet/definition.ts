/**
 * Any Parquet dataset as Hugging Face `datasets` writes it (one file, a folder, or a Hub snapshot with
 * `data/*.parquet` and `<config>/*.parquet`): the image column and the texts are mapped by `columns`
 * or detected (sources/readers/hfColumns.ts). The reader is reader.ts.
 */
import { z } from 'zod';
import { QUESTIONS, questionSchema } from '../../config/sourceFields.js';
import { defineSource } from '../definition.js';

const columnName = z.string().min(1);

export const parquetDefinition = defineSource({
  type: 'parquet',
  fields: {
    /** Which columns hold what; the others are detected (an `Image` feature, `conversations`, `question`/`query`, `answer`/`label`, `caption`/`text`, `id`). */
    columns: z.object({ image: columnName, question: columnName, answer: columnName, id: columnName, text: columnName, conversations: columnName }).partial().strict().default({}),
    /** Splits read (from the Hub file names: `data/<split>-NNNNN-of-NNNNN.parquet`); all when empty. */
    splits: z.array(z.string().min(1)).default([]),
    /** Configs read (`<config>/<split>-*.parquet`; `default` for `data/`); all when empty. */
    configs: z.array(z.string().min(1)).default([]),
    question: questionSchema(QUESTIONS),
  },
  defaults: {
    dedupe: 'image+question',
    licenseNote: 'the Parquet dataset’s own licence (see its dataset card)',
    image: {},
    question: QUESTIONS,
  },
  docs: {
    layout:
      "Hugging Face `datasets` Parquet: one `.parquet` file, a folder of them, or a Hub snapshot (`data/<split>-NNNNN-of-NNNNN.parquet`, `<config>/<split>-*.parquet`); the image an `Image` struct `{bytes, path}`, plain `binary`, or a path under the root (a file, or a member of a `.zip` under the root). Planning reads only the small columns of each row group (never image bytes); a shard reads a row's image by its row group (its image column once per row group and worker)",
    instruction:
      'the mapped question (`conversations`: the first human turn; else `question`/`query`), cleaned and refined, with the answer (`answer`/`label`, a list gives its first item) as a reference; without one, generated with the text (`caption`/`text`) as grounding',
    hub: ['any dataset written by `datasets` (`Dataset.to_parquet`, `push_to_hub`)'],
  },
});
