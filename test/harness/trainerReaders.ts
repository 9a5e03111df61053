/**
 * Runs the Python readers of test/readers/ under each `datasets` release the trainers use
 * (tools/install.sh test installs them): LLaMA-Factory accepts datasets 2.16.0 to 4.0.0, and the
 * tools venv holds the newest release.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { TOOLS_DIR } from '../../local/tools.js';

const run = promisify(execFile);
const readers = (name: string) => fileURLToPath(new URL(`../readers/${name}`, import.meta.url));

export const DATASETS_VENVS: ReadonlyArray<{ label: string; python: string }> = [
  { label: 'datasets 2.16.0', python: `${TOOLS_DIR}datasets-2.16.0/bin/python` },
  { label: 'datasets 3.6.0', python: `${TOOLS_DIR}datasets-3.6.0/bin/python` },
  { label: 'datasets 4.0.0', python: `${TOOLS_DIR}datasets-4.0.0/bin/python` },
  { label: 'datasets latest', python: `${TOOLS_DIR}venv/bin/python` },
];

export interface LlamaFactoryEntry {
  error?: string;
  rows: number;
  columns: string[];
  attr: Record<string, unknown>;
  problems: string[];
  metadata_keys: string[];
  ids: string[];
  /** Responses per aligned row: 1 for SFT, 2 (chosen, rejected) for a ranking pair. */
  responses: number[];
  /** Prompt messages per aligned row (a chat's turns before its last answer) and its system text. */
  prompt_messages: number[];
  systems: string[];
}

/** Loads `dataset_dir` through its dataset_info.json with LLaMA-Factory's own parser and converter (test/readers/llamafactory_load.py). */
export function loadLikeLlamaFactory(python: string, datasetDir: string, cacheDir: string): Promise<{ datasets_version: string; entries: Record<string, LlamaFactoryEntry> }> {
  return runReader(python, 'llamafactory_load.py', [datasetDir], { HF_CACHE_DIR: cacheDir });
}

/** Runs a reader script with one venv's python; resolves with its parsed JSON output. */
export async function runReader<T>(python: string, script: string, args: string[], env: Record<string, string> = {}): Promise<T> {
  if (!existsSync(python)) throw new Error(`${python} is missing: run 'bash tools/install.sh test' (npm test does)`);
  const { stdout } = await run(python, [readers(script), ...args], { env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(stdout) as T;
}
