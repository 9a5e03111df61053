/**
 * Which columns of a Hugging Face Parquet table hold the image, the question, the answer, the text
 * and the id: the ones a config's `columns` names, else detected from the table. Detection takes the
 * `Image` feature of the file's `huggingface` metadata first (RICO-Screen2Words has three: `image`
 * wins), then an `{bytes, path}` struct, a binary column (ahmed-masry/ChartQA), or a path string
 * (`file_name`, `image_path`...); LLaVA `conversations`; `question`/`query`; `answer`/`label` (a list
 * gives its first item); `caption`/`text`. `mmif validate` and `init` print the mapping chosen.
 */
import { InputError } from '../../domain/errors.js';
import type { ColumnKind, ParquetColumn, ParquetTable } from './hfParquet.js';

export const COLUMN_ROLES = ['image', 'question', 'answer', 'id', 'text', 'conversations'] as const;
export type ColumnRole = (typeof COLUMN_ROLES)[number];
export type ColumnRequest = Partial<Record<ColumnRole, string>>;

export interface ColumnMap {
  /** `found`: how the image column was chosen (config `columns.image`, or what detection matched). */
  image: { name: string; holds: 'bytes' | 'path'; found: ImageFound };
  question?: string;
  answer?: string;
  id?: string;
  text?: string;
  conversations?: string;
}

/** How the image column was chosen: named by `columns.image`, or detected (in this order of preference). */
export type ImageFound = 'columns.image' | 'huggingface Image feature' | '{bytes, path} struct' | 'binary column' | 'path column name';

/** A column asked for or needed that the file does not hold: validate exits 2 with this message. */
export class ColumnMappingError extends InputError {
  override name = 'ColumnMappingError';
}

/** What each role accepts. */
const ACCEPTS: Record<ColumnRole, readonly ColumnKind[]> = {
  image: ['image-struct', 'binary', 'string'],
  question: ['string'],
  answer: ['string', 'string-list'],
  id: ['string', 'number'],
  text: ['string', 'string-list'],
  conversations: ['conversations'],
};

/** Names detection looks for, in order of preference. */
const NAMES: Record<ColumnRole, readonly string[]> = {
  image: ['image', 'images', 'img', 'jpg', 'png', 'picture'],
  question: ['question', 'query'],
  answer: ['answer', 'label', 'answers'],
  id: ['id'],
  text: ['caption', 'text', 'captions'],
  conversations: ['conversations'],
};
const PATH_NAMES = ['image', 'image_path', 'file_name', 'filename', 'file', 'path', 'img'];

/** The columns to read, from `request` where it names them, else detected. */
export function mapColumns(table: ParquetTable, request: ColumnRequest = {}): ColumnMap {
  const byName = new Map(table.columns.map((c) => [c.name, c]));
  const asked = (role: ColumnRole): ParquetColumn | undefined => {
    const name = request[role];
    if (name === undefined) return undefined;
    const column = byName.get(name);
    if (!column) throw new ColumnMappingError(`${table.key}: columns.${role} is '${name}', but the file holds ${holds(table)}`);
    if (!ACCEPTS[role].includes(column.kind)) {
      throw new ColumnMappingError(`${table.key}: columns.${role} is '${name}', a ${describe(column)} column; ${role} takes ${ACCEPTS[role].join(' or ')}`);
    }
    return column;
  };

  const named = asked('image');
  const image = named ? { column: named, found: 'columns.image' as const } : detectImage(table.columns);
  if (!image) throw new ColumnMappingError(`${table.key}: no image column (an Image feature, a {bytes, path} struct, binary, or a path string): the file holds ${holds(table)}`);
  const map: ColumnMap = { image: { name: image.column.name, holds: image.column.kind === 'string' ? 'path' : 'bytes', found: image.found } };
  for (const role of COLUMN_ROLES) {
    if (role === 'image') continue;
    const column = asked(role) ?? NAMES[role].map((n) => byName.get(n)).find((c) => c !== undefined && c !== image.column && ACCEPTS[role].includes(c.kind));
    if (column) map[role] = column.name;
  }
  return map;
}

function detectImage(columns: ParquetColumn[]): { column: ParquetColumn; found: ImageFound } | undefined {
  const preferred = (candidates: ParquetColumn[]) => NAMES.image.map((n) => candidates.find((c) => c.name === n)).find((c) => c !== undefined) ?? candidates[0]!;
  const tiers: Array<[ImageFound, ParquetColumn[]]> = [
    ['huggingface Image feature', columns.filter((c) => c.feature === 'Image' && (c.kind === 'image-struct' || c.kind === 'binary'))],
    ['{bytes, path} struct', columns.filter((c) => c.kind === 'image-struct')],
    ['binary column', columns.filter((c) => c.kind === 'binary')],
  ];
  for (const [found, candidates] of tiers) if (candidates.length > 0) return { column: preferred(candidates), found };
  const path = PATH_NAMES.map((n) => columns.find((c) => c.name === n && c.kind === 'string')).find((c) => c !== undefined);
  return path && { column: path, found: 'path column name' };
}

function describe(column: ParquetColumn): string {
  return column.feature && column.feature !== 'Value' ? `${column.kind} (${column.feature})` : column.kind;
}

/** `a: string, b: image-struct (Image), ...`: what the file holds, for messages. */
export function holds(table: ParquetTable): string {
  return table.columns.map((c) => `${c.name}: ${describe(c)}`).join(', ');
}

/**
 * One line: `image ← image (bytes; huggingface Image feature), question ← query, answer ← label`, each
 * role named by `columns` marked `(columns.<role>)`, the others detected by name.
 */
export function describeMapping(map: ColumnMap, request: ColumnRequest = {}): string {
  const parts = [`image ← ${map.image.name} (${map.image.holds === 'path' ? 'path under the root' : 'bytes'}; ${map.image.found})`];
  for (const role of COLUMN_ROLES) {
    const name = role === 'image' ? undefined : map[role];
    if (name) parts.push(`${role} ← ${name}${request[role] !== undefined ? ` (columns.${role})` : ''}`);
  }
  return parts.join(', ');
}
