/**
 * ChartQA (vis-nlp/ChartQA): chart images with human and augmented questions, labels kept as
 * reference answers, data tables as grounding. The reader is reader.ts.
 */
import { z } from 'zod';
import { QUESTIONS, STRUCTURE_CONSTRAINTS, layoutField, questionSchema } from '../../config/sourceFields.js';
import { defineSource } from '../definition.js';

// ChartQA queries are one-liners; a long one is a pasted table or a template.
const QUESTION = { ...QUESTIONS, maxLength: 500 };

export const chartqaDefinition = defineSource({
  type: 'chartqa',
  fields: {
    /** `release`: the `ChartQA Dataset/` folder; `hub`: the Hub's Parquet with the charts inside; 'auto' detects. */
    layout: layoutField(['release', 'hub']),
    splits: z
      .array(z.enum(['train', 'val', 'test']))
      .min(1)
      .default(['train']),
    sets: z
      .array(z.enum(['human', 'augmented']))
      .min(1)
      .default(['human', 'augmented']),
    /** Attach the chart's data table (`tables/<name>.csv`, cut to a few KB) as grounding. */
    attachTables: z.boolean().default(true),
    question: questionSchema(QUESTION),
  },
  defaults: {
    dedupe: 'image+question',
    licenseNote: 'ChartQA: GPL-3.0; charts crawled from their publishers (see dataset card)',
    // Charts are often wide (time series) and sometimes small exports.
    image: { minShortSide: 128, maxAspectRatio: 4 },
    constraintTypes: [...STRUCTURE_CONSTRAINTS, 'precision', 'scientific_notation', 'perspective_requirement', 'case_requirements'],
    question: QUESTION,
  },
  docs: {
    layout:
      "`ChartQA Dataset/{split}/{split}_{human,augmented}.json` (`{imgname, query, label}`), charts in `{split}/png/`, optional `{split}/tables/<stem>.csv` (attached as grounding, ≤ 4 KB; a table that is not UTF-8 makes its records source problems `encoding:`); the root may be `ChartQA Dataset/` itself; or the Hub's Parquet with the charts inside, `data/{split}-*.parquet` (`HuggingFaceM4/ChartQA`: `image: Image`, `query`, `label: list<string>`, `human_or_machine: ClassLabel`, machine = the augmented set; `lmms-lab/ChartQA`: the test split, `type`, `question`, `answer`; `ahmed-masry/ChartQA`: `image` as plain binary, `imgname`, `query`, `label`, `type`), no tables",
    instruction:
      '`query`, refined into an open task; `label` kept and given to the answer stage as a reference (list strings `"[4, 9]"` become `4, 9`; a five-digit spreadsheet date serial such as `"44362"` becomes `2021-06-15` when the question asks for a date; a bracketed label that does not parse is filtered as `label-unreadable`)',
    hub: ['vis-nlp/ChartQA (the GitHub release, `ChartQA Dataset/`)', 'HuggingFaceM4/ChartQA', 'lmms-lab/ChartQA', 'ahmed-masry/ChartQA'],
  },
});
