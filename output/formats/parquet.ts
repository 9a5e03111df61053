/**
 * Parquet shards in the layout Hugging Face `datasets` loads directly: the image column is the
 * `{bytes, path}` struct with an `Image` feature declared in the schema's `huggingface` metadata,
 * so `load_dataset("parquet", ...)` decodes it as a PIL image, in every datasets release from 2.16
 * (output/formats/hfFeatures.ts declares every column). The image column is nullable for that: datasets 3.x
 * and later only trust a declared feature whose Arrow field equals the file's.
 */
import { Writable } from 'node:stream';
import { ParquetSchema, ParquetWriter, type FieldDefinition } from '@dsnp/parquetjs';
import type { WriteStreamMinimal } from '@dsnp/parquetjs/dist/lib/util.js';
import { hfFeatures, type HfFeatures } from './hfFeatures.js';
import type { DpoRecord, InstructRecord } from '../contracts/records.js';
import type { Verdict } from '../../domain/verdict.js';

/**
 * Binary columns (text and image bytes) keep no min/max statistics: a writer stores a column's
 * lowest and highest value in every page header and column chunk (twice: beside the chunk and in
 * the footer), so with statistics each row group held up to six extra copies of whole images and
 * prompts (a shard weighed 4-8x its content). Nobody filters these columns by range, which is all
 * such statistics serve (parquet-format README, "Metadata": statistics are optional per column).
 */
const NO_STATISTICS = { statistics: false } as const;
/**
 * A nullable, GZIP-compressed UTF-8 column (the TRL rows use it too). The writer has no dictionary
 * encoding (@dsnp/parquetjs encodes PLAIN or RLE only: lib/codec), so GZIP is what folds the
 * repeated values (source, licence, model names) of a page.
 */
export const text: FieldDefinition = { type: 'UTF8', optional: true, compression: 'GZIP', ...NO_STATISTICS };
export const flag: FieldDefinition = { type: 'BOOLEAN', optional: true };
/**
 * The struct `datasets`' `Image` feature stores: encoded bytes and the file name they came from.
 * The bytes are stored uncompressed: JPEG/PNG/WebP are compressed already, GZIP would cost CPU for
 * nothing.
 */
export const imageField: FieldDefinition = {
  optional: true,
  fields: { bytes: { type: 'BYTE_ARRAY', optional: true, ...NO_STATISTICS }, path: text },
};
const number: FieldDefinition = { type: 'DOUBLE', optional: true };
const integer: FieldDefinition = { type: 'INT64', optional: true };
const constraintList: FieldDefinition = { repeated: true, fields: { type: text, value: text } };
/**
 * Nested structs keep the JSON record's field names (`selectionNote`, `judgeModel`): one name per
 * field whichever format is read. Verifier calls are stored as JSON text: their params are
 * heterogeneous (numbers, strings, lists).
 */
const plannedConstraintList: FieldDefinition = {
  repeated: true,
  fields: { type: text, value: text, method: text, selection: text, selectionNote: text, verifiers: text },
};
const verdictList: FieldDefinition = {
  repeated: true,
  fields: { index: integer, type: text, method: text, passed: flag, vacuous: flag, calls: text, judgeModel: text, detail: text, judgeAudit: text, reusedFrom: text, without: text },
};

const common: Record<string, FieldDefinition> = {
  id: text,
  source: text,
  source_id: text,
  license: text,
  image: imageField,
  image_sha256: text,
  /** JSON text: {file, member?, record?, hub?: {repo, revision}}. */
  image_origin: text,
  instruction: text,
  instruction_origin: text,
  original_instruction: text,
  original_answer: text,
  constraints: plannedConstraintList,
  prompt: text,
  prompt_template: text,
  generation_prompt: text,
  verdicts: verdictList,
  pass_rate: number,
  simulated: flag,
  /** JSON text: {scorer, score, tags?, entropyBits?}, or null. */
  image_richness: text,
  /** quality.visionDependence's verdict, null when the build did not check. */
  vision_dependent: flag,
};

const instructFields: Record<string, FieldDefinition> = {
  ...common,
  answer: text,
  answer_attempts: integer,
  models: {
    optional: true,
    fields: { instruction: text, constraints: text, compatibility: text, verifier: text, answer: text, judge: text },
  },
};

const dpoFields: Record<string, FieldDefinition> = {
  ...common,
  sample_id: text,
  chosen: text,
  rejected: text,
  rejected_prompt: text,
  dropped_constraints: constraintList,
  strategy: text,
  rejected_verdicts: verdictList,
  chosen_model: text,
  rejected_model: text,
  pair_validation: text,
  rejected_attempts: integer,
  /** JSON text: {rule: rejected answers refused}. */
  pair_rule_rejections: text,
};

/** The columns of the instruct and dpo Parquet files (the dataset card names each of them). */
export const PARQUET_COLUMNS = { instruct: Object.keys(instructFields), dpo: Object.keys(dpoFields) } as const;

/** A Parquet schema with the `datasets` features declared for it. */
export interface ParquetTable {
  schema: ParquetSchema;
  features: HfFeatures;
}

/** `imageColumns`: the `Image` features of the `{bytes, path}` columns (the rest follow the schema). */
export function parquetTable(fields: Record<string, FieldDefinition>, imageColumns: HfFeatures): ParquetTable {
  return { schema: new ParquetSchema(fields), features: hfFeatures(fields, imageColumns) };
}

const instructTable = parquetTable(instructFields, { image: { _type: 'Image' } });
const dpoTable = parquetTable(dpoFields, { image: { _type: 'Image' } });
// With training.keepReasoning the records carry the models' reasoning, in columns of their own.
const instructReasoningTable = parquetTable({ ...instructFields, answer_reasoning: text }, { image: { _type: 'Image' } });
const dpoReasoningTable = parquetTable({ ...dpoFields, chosen_reasoning: text, rejected_reasoning: text }, { image: { _type: 'Image' } });

export type ImageBytes = (record: InstructRecord | DpoRecord) => Buffer;

export function instructParquet(records: readonly InstructRecord[], imageBytes: ImageBytes): Promise<Buffer> {
  const table = records.some((r) => r.answer_reasoning !== undefined) ? instructReasoningTable : instructTable;
  return writeParquet(
    table,
    records.map((r) => withImage(r, imageBytes)),
  );
}

export function dpoParquet(records: readonly DpoRecord[], imageBytes: ImageBytes): Promise<Buffer> {
  const table = records.some((r) => r.chosen_reasoning !== undefined) ? dpoReasoningTable : dpoTable;
  return writeParquet(
    table,
    records.map((r) => withImage(r, imageBytes)),
  );
}

function withImage(record: InstructRecord | DpoRecord, imageBytes: ImageBytes): Record<string, unknown> {
  const { image_path, constraints, verdicts, ...rest } = record;
  return {
    ...rest,
    ...('rejected_verdicts' in record ? { rejected_verdicts: record.rejected_verdicts.map(verdictRow), pair_rule_rejections: JSON.stringify(record.pair_rule_rejections) } : {}),
    image: { bytes: imageBytes(record), path: image_path },
    image_richness: record.image_richness ? JSON.stringify(record.image_richness) : null,
    image_origin: JSON.stringify(record.image_origin),
    constraints: constraints.map((c) => ({ ...c, verifiers: JSON.stringify(c.verifiers) })),
    verdicts: verdicts.map(verdictRow),
  };
}

function verdictRow(v: Verdict): Record<string, unknown> {
  // judgeAudit (a sampled rule verdict's judge score) is JSON text too: null on every other verdict.
  return { ...v, calls: JSON.stringify(v.calls ?? []), judgeAudit: v.judgeAudit ? JSON.stringify(v.judgeAudit) : null };
}

export async function writeParquet(table: ParquetTable, rows: Record<string, unknown>[]): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk);
      done();
    },
  });
  // The writer's stream type is Pick<fs.WriteStream, 'write' | 'end'> (lib/util.d.ts) though it only
  // calls write(buf, callback) and end(callback) (lib/util.js oswrite, osend), which a Writable has.
  // Row groups of 64 keep a reader's memory bounded while images are in the rows.
  const writer = await ParquetWriter.openStream(table.schema, sink as unknown as WriteStreamMinimal, { rowGroupSize: 64 });
  writer.setMetadata('huggingface', JSON.stringify({ info: { features: table.features } }));
  for (const row of rows) await writer.appendRow(row);
  await writer.close();
  return Buffer.concat(chunks);
}
