/**
 * The folders are layers, lowest first (what may use what, not the order data moves in); a folder may
 * import only from its own level or below, so pure domain logic never reaches up into storage, Temporal plumbing or the CLI. This test
 * reads every import of every module and names each one that points upward.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PRODUCT_FOLDERS } from '../harness/productFolders.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Lowest first (test/harness/productFolders.ts), output/ ranked by its sub-folders: the data
 * contracts (types every other part imports), the formats that write records, the shard commit that
 * writes them through the formats, the viewer, and the reports (which write the viewer beside the
 * dataset card).
 */
const OUTPUT_LAYERS = ['output/contracts', 'output/formats', 'output/commit', 'output/viewer', 'output/reports'];
const LAYERS = PRODUCT_FOLDERS.flatMap((folder) => (folder === 'output' ? OUTPUT_LAYERS : [folder]));

/**
 * A source type's definition (sources/<type>/definition.ts, sources/definition.ts) and the registry
 * listing them (sources/registry.ts) are config: pure, the config schema is built from them. They sit
 * in sources/ so that a source type is one folder, and may import only config and domain.
 */
const CONFIG_LEVEL_SOURCES = /^sources\/(?:registry|definition|[a-z0-9]+\/definition)\.[jt]s$/;

/** The layer of a repo-relative path: its folder, or for output/ its sub-folder. */
const layerOf = (file: string): string => {
  if (CONFIG_LEVEL_SOURCES.test(file)) return 'config';
  const [top, sub] = file.split('/');
  return top === 'output' ? `output/${sub}` : top!;
};

async function modules(folder: string): Promise<string[]> {
  const entries = await readdir(path.join(REPO, folder), { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => path.relative(REPO, path.join(e.parentPath, e.name)));
}

/** The imports in `text` (the source of `file`, relative to the repo) that point to a higher folder. */
function upwardImports(file: string, text: string): string[] {
  const folder = layerOf(file);
  const upward: string[] = [];
  for (const [, spec] of text.matchAll(/(?:from|import\()\s*(?:\/\*[^*]*\*\/\s*)?'(\.{1,2}\/[^']+)'/g)) {
    const target = layerOf(path.posix.normalize(path.posix.join(path.posix.dirname(file), spec!)));
    if (LAYERS.indexOf(target) > LAYERS.indexOf(folder)) upward.push(`${file} imports ${spec}`);
  }
  return upward;
}

test('no folder imports a folder above it in the layers', async () => {
  const upward: string[] = [];
  for (const folder of LAYERS) {
    for (const file of await modules(folder)) upward.push(...upwardImports(file.split(path.sep).join('/'), await readFile(path.join(REPO, file), 'utf8')));
  }
  assert.deepEqual(upward, []);
});

test('the check names an upward import, static or dynamic, and lets a downward one pass', () => {
  const source =
    "import type { X } from '../output/contracts/records.js';\nconst m = await import('../../cli/mmif.js');\nconst w = await import(/* webpackMode: \"eager\" */ '../../worker/createWorker.js');\nimport { y } from './sample.js';\nimport { z } from '../config/buildConfig.js';";
  // From a subfolder, '../output' stays inside domain/; '../../cli' leaves it.
  assert.deepEqual(upwardImports('domain/constraints/x.ts', source), [
    'domain/constraints/x.ts imports ../../cli/mmif.js',
    'domain/constraints/x.ts imports ../../worker/createWorker.js',
  ]);
  assert.deepEqual(upwardImports('domain/x.ts', source), ['domain/x.ts imports ../output/contracts/records.js', 'domain/x.ts imports ../config/buildConfig.js']);
  assert.deepEqual(upwardImports('cli/x.ts', source), []);
  // Inside output/, by sub-folder: formats may not reach into the commit, the commit may use formats.
  assert.deepEqual(upwardImports('output/formats/x.ts', "import { loadStates } from '../commit/shardWriter.js';"), ['output/formats/x.ts imports ../commit/shardWriter.js']);
  assert.deepEqual(upwardImports('output/commit/x.ts', "import { jsonl } from '../formats/sharegpt.js';\nimport type { R } from '../contracts/records.js';"), []);
  // A source type's definition is config: it may be read by config/, and may not read a reader.
  assert.deepEqual(upwardImports('config/sourceConfig.ts', "import { SOURCE_DEFINITIONS } from '../sources/registry.js';"), []);
  assert.deepEqual(upwardImports('sources/cc3m/definition.ts', "import { open } from './reader.js';\nimport { z } from '../../config/sourceFields.js';"), [
    'sources/cc3m/definition.ts imports ./reader.js',
  ]);
});

test('every module of output/ sits in a ranked sub-folder', async () => {
  const entries = await readdir(path.join(REPO, 'output'), { withFileTypes: true });
  assert.deepEqual(
    entries.filter((e) => e.isFile() || !LAYERS.includes(`output/${e.name}`)).map((e) => e.name),
    [],
  );
});

/**
 * The modules Temporal loads as a whole and that must therefore export what others define: the
 * workflow bundle's entry (`workflowsPath`, worker/bundleProcess.ts) and the worker's activity
 * registry (worker/createWorker.ts).
 */
const REGISTRIES = ['workflows/index.ts', 'activities/index.ts'];

test('no product module re-exports another module: a concept is imported from the module that owns it', async () => {
  const barrels: string[] = [];
  for (const folder of LAYERS.filter((layer) => !layer.startsWith('output/')).concat('output')) {
    for (const file of await modules(folder)) {
      const name = file.split(path.sep).join('/');
      if (REGISTRIES.includes(name)) continue;
      const text = await readFile(path.join(REPO, file), 'utf8');
      for (const [line] of text.matchAll(/^export\s+(?:type\s+)?(?:\*|\{[^}]*\})\s+from\s+'[^']+';?$/gm)) barrels.push(`${name}: ${line!.replace(/\s+/g, ' ')}`);
    }
  }
  assert.deepEqual(barrels, []);
});
