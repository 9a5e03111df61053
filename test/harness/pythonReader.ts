import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { TOOLS_DIR } from '../../local/tools.js';

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL('../readers/read_dataset.py', import.meta.url));

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

/** Reads Parquet files with pyarrow and Hugging Face `datasets` from the tools venv: an independent reader. */
export async function readParquetWithPython(paths: string[], cacheDir: string): Promise<PythonFile[]> {
  const { stdout } = await run(`${TOOLS_DIR}venv/bin/python`, [SCRIPT, ...paths], {
    env: { ...process.env, HF_CACHE_DIR: cacheDir },
    maxBuffer: 64 * 1024 * 1024,
  });
  return (JSON.parse(stdout) as { files: PythonFile[] }).files;
}
