/**
 * The workflow boundary: every module the workflow bundle evaluates (the import closure of
 * workflows/index.ts) is replayed code, so a change to it can break the replay of running builds and
 * needs `patched()` with a recorded history (test/replay/). This test computes that closure and
 * checks it against WORKFLOW_BOUNDARY, the one list of modules outside workflows/ that workflow code
 * may import: an import that widens the boundary fails here until it is added to the list, on purpose.
 * Type-only imports are erased at bundling and do not count.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Modules outside workflows/ in the workflow bundle: deterministic, no I/O, no Node built-ins.
 * config/: the schemas a workflow parses its input with (workflows/configInput.ts), with the source
 * types' definitions they are built from (sources/registry.ts, pure); domain/: pure
 * logic; llm/concurrencyLeases.ts: the lease arithmetic of the endpointLeases workflow;
 * output/commit/manifest.ts: the usage arithmetic the build's progress adds manifests up with, and whether
 * a re-run re-opens a committed shard (its types come from output/contracts/, erased at bundling).
 */
export const WORKFLOW_BOUNDARY = [
  'config/buildConfig.ts',
  'config/configError.ts',
  'config/decontaminationConfig.ts',
  'config/endpointRouting.ts',
  'config/evalConfig.ts',
  'config/fingerprint.ts',
  'config/generationConfig.ts',
  'config/imageConfig.ts',
  'config/llmConfig.ts',
  'config/modelsConfig.ts',
  'config/parseConfig.ts',
  'config/resolvedConfig.ts',
  'config/retryConfig.ts',
  'config/s3Config.ts',
  'config/slug.ts',
  'config/stages.ts',
  'config/sourceConfig.ts',
  'config/sourceFields.ts',
  'domain/buildWorkflowId.ts',
  'domain/commitOrder.ts',
  'domain/closestName.ts',
  'domain/constraints/catalogue.ts',
  'domain/counts.ts',
  'domain/errors.ts',
  'domain/mapLimit.ts',
  'domain/multiturn/limits.ts',
  'domain/sampleLanes.ts',
  'domain/targets.ts',
  'domain/verdict.ts',
  'domain/yieldBound.ts',
  'llm/concurrencyLeases.ts',
  'output/commit/manifest.ts',
  'sources/allava/definition.ts',
  'sources/cc3m/definition.ts',
  'sources/chartqa/definition.ts',
  'sources/definition.ts',
  'sources/geo170k/definition.ts',
  'sources/multiui/definition.ts',
  'sources/registry.ts',
  'sources/rico/definition.ts',
];

/** Packages the workflow bundle may import: the workflow SDK and zod (pure). */
const PACKAGES = ['@temporalio/common', '@temporalio/workflow', 'zod'];

/** Value imports of a module's source (static, re-exports, dynamic): type-only ones are erased. */
export function valueImports(source: string): string[] {
  const specs: string[] = [];
  for (const [, kind, spec] of source.matchAll(/^\s*(?:import|export)\s+(type\s+)?[^'";]*?\bfrom\s+'([^']+)'/gm)) if (!kind) specs.push(spec!);
  for (const [, spec] of source.matchAll(/^\s*import\s+'([^']+)'/gm)) specs.push(spec!);
  for (const [, spec] of source.matchAll(/\bimport\(\s*(?:\/\*[^*]*\*\/\s*)?'([^']+)'\s*\)/g)) specs.push(spec!);
  return specs;
}

/** The modules (repo-relative .ts paths) and packages reachable from `entry`; `read` gives a module's source. */
export function importClosure(entry: string, read: (file: string) => string): { modules: Set<string>; packages: Set<string> } {
  const modules = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (modules.has(file)) return;
    modules.add(file);
    for (const spec of valueImports(read(file))) {
      if (!spec.startsWith('.')) packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
      else visit(path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)).replace(/\.js$/, '.ts'));
    }
  };
  visit(entry);
  return { modules, packages };
}

/** What the closure from workflows/index.ts holds beyond the boundary, as readable lines. */
function outsideTheBoundary(read: (file: string) => string): string[] {
  const { modules, packages } = importClosure('workflows/index.ts', read);
  return [
    ...[...modules].filter((m) => !m.startsWith('workflows/') && !WORKFLOW_BOUNDARY.includes(m)).map((m) => `module ${m}`),
    ...[...packages].filter((p) => !PACKAGES.includes(p)).map((p) => `package ${p}`),
  ];
}

const readRepo = (file: string) => readFileSync(path.join(REPO, file), 'utf8');

test('the workflow bundle imports nothing outside the listed boundary, and every listed module is in it', () => {
  assert.deepEqual(outsideTheBoundary(readRepo), []);
  const { modules } = importClosure('workflows/index.ts', readRepo);
  assert.deepEqual(
    WORKFLOW_BOUNDARY.filter((m) => !modules.has(m)),
    [],
    'listed but no longer imported: remove it from WORKFLOW_BOUNDARY',
  );
});

test('an import added to workflow code that leaves the boundary fails the check, static or dynamic, but not a type-only one', () => {
  const withLine = (line: string) => (file: string) => (file === 'workflows/buildShard.ts' ? `${line}\n${readRepo(file)}` : readRepo(file));
  assert.deepEqual(outsideTheBoundary(withLine("import { openStore } from '../storage/openStore.js';")).slice(0, 1), ['module storage/openStore.ts']);
  assert.ok(outsideTheBoundary(withLine('const m = await import(/* webpackMode: "eager" */ \'../llm/pricing.js\');')).includes('module llm/pricing.ts'));
  assert.ok(outsideTheBoundary(withLine("import { readFile } from 'node:fs/promises';")).includes('package node:fs'));
  assert.deepEqual(outsideTheBoundary(withLine("import type { ObjectStore } from '../storage/objectStore.js';")), []);
});
