import { TOOLS_DIR } from '../../local/tools.js';
import { runReader } from './trainerReaders.js';

export interface PythonRow {
  id: string;
  image_sha256: string;
  image_bytes_sha256: string;
  image_path: string;
  constraint_types: string[];
  /** As stored, JSON-text columns parsed: an absent optional field reads as null. */
  constraints: Array<Record<string, unknown>>;
  verdicts: Array<Record<string, unknown>>;
  decoded_image: { mode: string; size: [number, number] };
}

export interface PythonFile {
  path: string;
  columns: string[];
  hf_features: Record<string, string>;
  rows: PythonRow[];
}

/** Reads Parquet files with pyarrow and Hugging Face `datasets` (the tools venv's unless `python` is given): an independent reader. */
export async function readParquetWithPython(paths: string[], cacheDir: string, python = `${TOOLS_DIR}venv/bin/python`): Promise<PythonFile[]> {
  const out = await runReader<{ files: PythonFile[] }>(python, 'read_dataset.py', paths, { HF_CACHE_DIR: cacheDir });
  return out.files;
}
