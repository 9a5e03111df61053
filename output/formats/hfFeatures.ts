/**
 * The Hugging Face `datasets` features of a Parquet schema, for the `huggingface` key of the file's
 * metadata: every column declared, in the dict form `Features.to_dict` writes (a list is `[item]`).
 * Declaring every column, not only the image ones, is what datasets 2.x needs: it takes the
 * declaration as the whole schema and casts the table to it. datasets 3.x and later use a declared
 * column only where its Arrow field equals the file's and infer the others, so the image columns
 * must match exactly (see output/formats/parquet.ts and output/formats/trl.ts).
 */
import type { FieldDefinition } from '@dsnp/parquetjs';

type HfFeature = Record<string, unknown> | HfFeature[];
export type HfFeatures = Record<string, HfFeature>;

const DTYPES: Record<string, string> = { UTF8: 'string', BYTE_ARRAY: 'binary', DOUBLE: 'float64', INT64: 'int64', BOOLEAN: 'bool' };

/** `fields` as datasets features; `overrides` (the image columns) replace the inferred ones. */
export function hfFeatures(fields: Record<string, FieldDefinition>, overrides: HfFeatures = {}): HfFeatures {
  return Object.fromEntries(Object.entries(fields).map(([name, field]) => [name, overrides[name] ?? hfFeature(field)]));
}

function hfFeature(field: FieldDefinition): HfFeature {
  // A three-level Parquet LIST (optional group (LIST) { repeated group list { element } }) is one list.
  if (field.type === 'LIST') return [hfFeature(field.fields!.list!.fields!.element!)];
  const item: HfFeature = field.fields ? hfFeatures(field.fields) : { dtype: dtypeOf(field.type), _type: 'Value' };
  return field.repeated ? [item] : item;
}

function dtypeOf(type: string | undefined): string {
  const dtype = type && DTYPES[type];
  if (!dtype) throw new Error(`no datasets dtype for the Parquet type ${type}`);
  return dtype;
}
