/**
 * Richness scores computed elsewhere, read so that users who ran the authors' filter get exactly their
 * selection. Layouts (MM-IFEngine `data_gen/data_filter/`): `final_output.jsonl` (gene_modified_multi.py,
 * IC9600: one `{"<filename>": <score>}` a line), `final_output_sorted.csv` (sort_by_score.py:
 * `filename,score`), `ic_ram_output.csv` (add_ram.py, RAM++: `filename,score,ram_en_tag,ram_cnt`, the
 * tags joined with " | "), or any CSV with `filename` and `score` (and `ram_cnt`) columns or JSONL
 * `{"filename", "score", "ram_cnt"?}`. File names match by base name (the authors scored
 * `os.listdir` of the image folder), whatever their extension: a webdataset record planned from its
 * tar's side file, its image member not read yet, matches the one image name with its key as stem.
 */
import { InputError } from '../domain/errors.js';
import type { ImageOrigin } from '../domain/sample.js';
import { IMAGE_EXTENSIONS } from './readers/datasetPath.js';

export interface ImportedScore {
  score: number;
  /** RAM++ tag count, when the file has one. */
  tags?: number;
}

export class ImportedScoresError extends InputError {
  override name = 'ImportedScoresError';
}

export function parseImportedScores(text: string, file: string): Map<string, ImportedScore> {
  const body = text.replace(/^\uFEFF/, '');
  return body.trimStart().startsWith('{') ? parseJsonl(body, file) : parseCsv(body, file);
}

export const baseName = (path: string): string => path.slice(path.lastIndexOf('/') + 1);

function parseJsonl(text: string, file: string): Map<string, ImportedScore> {
  const scores = new Map<string, ImportedScore>();
  for (const [i, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    const where = `${file} line ${i + 1}`;
    let entry: unknown;
    try {
      entry = JSON.parse(line);
    } catch (err) {
      throw new ImportedScoresError(`${where}: not JSON (${(err as Error).message})`);
    }
    if (!entry || typeof entry !== 'object' || Array.isArray(entry)) throw new ImportedScoresError(`${where}: expected an object`);
    const record = entry as Record<string, unknown>;
    if ('filename' in record) {
      add(scores, where, record.filename, record.score, record.ram_cnt);
    } else {
      // The IC9600 script's own lines: {"<filename>": <score>}.
      const keys = Object.keys(record);
      if (keys.length !== 1) throw new ImportedScoresError(`${where}: expected {"filename", "score"} or {"<filename>": <score>}`);
      add(scores, where, keys[0], record[keys[0]!], undefined);
    }
  }
  return scores;
}

function parseCsv(text: string, file: string): Map<string, ImportedScore> {
  const rows = csvRows(text, file);
  const header = rows.shift()?.map((h) => h.trim());
  const column = (name: string) => header?.indexOf(name) ?? -1;
  const [filename, score, ramCnt] = [column('filename'), column('score'), column('ram_cnt')];
  if (filename < 0 || score < 0) throw new ImportedScoresError(`${file}: the header needs "filename" and "score" columns, got ${JSON.stringify(header)}`);
  const scores = new Map<string, ImportedScore>();
  for (const [i, row] of rows.entries()) {
    if (row.length === 1 && row[0] === '') continue;
    add(scores, `${file} row ${i + 2}`, row[filename], row[score], ramCnt >= 0 ? row[ramCnt] : undefined);
  }
  return scores;
}

function add(scores: Map<string, ImportedScore>, where: string, name: unknown, score: unknown, tags: unknown): void {
  if (typeof name !== 'string' || name === '') throw new ImportedScoresError(`${where}: no filename`);
  const value = Number(score);
  if (score === '' || score === null || !Number.isFinite(value)) throw new ImportedScoresError(`${where}: score ${JSON.stringify(score)} is not a number`);
  const entry: ImportedScore = { score: value };
  if (tags !== undefined && tags !== '') {
    const count = Number(tags);
    if (!Number.isInteger(count) || count < 0) throw new ImportedScoresError(`${where}: ram_cnt ${JSON.stringify(tags)} is not a count`);
    entry.tags = count;
  }
  const key = baseName(name);
  if (scores.has(key)) throw new ImportedScoresError(`${where}: ${key} is scored twice`);
  scores.set(key, entry);
}

/** RFC 4180 rows, as pandas writes them: quoted fields may hold commas, quotes ("") and newlines. */
function csvRows(text: string, file: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i += 1;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"' && field === '') quoted = true;
    else if (ch === ',') {
      row.push(field);
      field = '';
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i += 1;
      rows.push([...row, field]);
      row = [];
      field = '';
    } else field += ch;
  }
  if (quoted) throw new ImportedScoresError(`${file}: unterminated quoted field`);
  if (field !== '' || row.length > 0) rows.push([...row, field]);
  return rows;
}

/** Image names by stem (`000000001.webp` -> `000000001`); a stem two image names share is ambiguous. */
export function scoresByStem(scores: Map<string, ImportedScore>): Map<string, string[]> {
  const stems = new Map<string, string[]>();
  for (const name of scores.keys()) {
    const dot = name.indexOf('.');
    if (dot <= 0 || !IMAGE_EXTENSIONS.has(name.slice(name.lastIndexOf('.') + 1).toLowerCase())) continue;
    const stem = name.slice(0, dot);
    stems.set(stem, [...(stems.get(stem) ?? []), name]);
  }
  return stems;
}

/** An image's imported score, by its file or member's base name, or by its webdataset record's key. */
export function importedScoreOf(
  scores: Map<string, ImportedScore>,
  stems: Map<string, string[]>,
  origin: ImageOrigin,
  file: string,
): { ok: true; score: ImportedScore } | { ok: false; reason: string } {
  if (origin.record === undefined) {
    const name = baseName(origin.member ?? origin.file);
    const entry = scores.get(name);
    return entry ? { ok: true, score: entry } : { ok: false, reason: `not-in-scores-file: ${name} is not in ${file}` };
  }
  const names = stems.get(origin.record) ?? [];
  if (names.length === 1) return { ok: true, score: scores.get(names[0]!)! };
  if (names.length === 0) return { ok: false, reason: `not-in-scores-file: no image of record ${origin.record} (${origin.file}) is in ${file}` };
  return { ok: false, reason: `ambiguous-in-scores-file: record ${origin.record} (${origin.file}) matches ${names.join(', ')} in ${file}` };
}
