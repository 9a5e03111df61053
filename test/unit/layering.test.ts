/**
 * The folders follow the data flow, lowest first; a folder may import only from its own level or
 * below, so pure domain logic never reaches up into storage, Temporal plumbing or the CLI. This test
 * reads every import of every module and names each one that points upward.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Lowest first. Side folders (local/, simulator/, bench/, test/) are tooling and not ranked. */
const LAYERS = ['domain', 'config', 'prompts', 'verification', 'storage', 'sources', 'image', 'llm', 'pipeline', 'output', 'activities', 'workflows', 'worker', 'cli'];

async function modules(folder: string): Promise<string[]> {
  const entries = await readdir(path.join(REPO, folder), { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => path.relative(REPO, path.join(e.parentPath, e.name)));
}

/** The imports in `text` (the source of `file`, relative to the repo) that point to a higher folder. */
function upwardImports(file: string, text: string): string[] {
  const folder = file.split('/')[0]!;
  const upward: string[] = [];
  for (const [, spec] of text.matchAll(/(?:from|import\()\s*(?:\/\*[^*]*\*\/\s*)?'(\.{1,2}\/[^']+)'/g)) {
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec!)).split('/')[0]!;
    if (LAYERS.indexOf(target) > LAYERS.indexOf(folder)) upward.push(`${file} imports ${spec}`);
  }
  return upward;
}

test('no folder imports a folder above it in the data flow', async () => {
  const upward: string[] = [];
  for (const folder of LAYERS) {
    for (const file of await modules(folder)) upward.push(...upwardImports(file.split(path.sep).join('/'), await readFile(path.join(REPO, file), 'utf8')));
  }
  assert.deepEqual(upward, []);
});

test('the check names an upward import, static or dynamic, and lets a downward one pass', () => {
  const source =
    "import type { X } from '../output/records.js';\nconst m = await import('../../cli/mmif.js');\nconst w = await import(/* webpackMode: \"eager\" */ '../../worker/createWorker.js');\nimport { y } from './sample.js';\nimport { z } from '../config/buildConfig.js';";
  // From a subfolder, '../output' stays inside domain/; '../../cli' leaves it.
  assert.deepEqual(upwardImports('domain/constraints/x.ts', source), [
    'domain/constraints/x.ts imports ../../cli/mmif.js',
    'domain/constraints/x.ts imports ../../worker/createWorker.js',
  ]);
  assert.deepEqual(upwardImports('domain/x.ts', source), ['domain/x.ts imports ../output/records.js', 'domain/x.ts imports ../config/buildConfig.js']);
  assert.deepEqual(upwardImports('cli/x.ts', source), []);
});
