/**
 * The workflow boundary: every module the workflow bundle evaluates (the import closure of
 * workflows/index.ts) is replayed code, so a change to it changes what a new worker version runs
 * (running builds stay pinned to theirs: docs/adr/0017-compatibility-reset.md). This test computes that closure and
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
 * Modules outside workflows/ in the workflow bundle: deterministic, no I/O, no Node built-ins, no
 * config schema (configs are resolved by an activity: workflows/configInput.ts).
 * config/endpointRouting.ts: each stage's endpoint and task queue from a resolved config (types
 * only from the schemas), with config/endpointReplicas.ts its replicas; config/stages.ts: the pure
 * stage descriptors, with config/rejectionReasons.ts reading a reason's stage and code; domain/: pure logic; llm/concurrencyLeases.ts: the lease arithmetic of the
 * endpointLeases workflow; output/commit/manifest.ts: the usage arithmetic the build's progress adds
 * manifests up with, and whether a re-run re-opens a committed shard.
 */
export const WORKFLOW_BOUNDARY = [
  'config/endpointReplicas.ts',
  'config/endpointRouting.ts',
  'config/rejectionReasons.ts',
  'config/stages.ts',
  'domain/buildWorkflowId.ts',
  'domain/causeChain.ts',
  'domain/commitOrder.ts',
  'domain/counts.ts',
  'domain/mapLimit.ts',
  'domain/planShape.ts',
  'domain/replicaShares.ts',
  'domain/sampleLanes.ts',
  'domain/tallies.ts',
  'domain/targets.ts',
  'domain/yieldBound.ts',
  'llm/concurrencyLeases.ts',
  'output/commit/manifest.ts',
];

/** Packages the workflow bundle may import: the workflow SDK only. */
const PACKAGES = ['@temporalio/common', '@temporalio/workflow'];

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
  assert.ok(outsideTheBoundary(withLine("import { z } from 'zod';")).includes('package zod'));
  assert.ok(outsideTheBoundary(withLine("import { parseBuildConfig } from '../config/buildConfig.js';")).includes('module config/buildConfig.ts'));
  assert.deepEqual(outsideTheBoundary(withLine("import type { ObjectStore } from '../storage/objectStore.js';")), []);
});

test('the tracing interceptor module the bundle also loads (workflows/tracing.ts) imports no engine module, only the SDK and its OpenTelemetry interceptors', () => {
  const { modules, packages } = importClosure('workflows/tracing.ts', readRepo);
  assert.deepEqual([...modules], ['workflows/tracing.ts']);
  assert.deepEqual(
    [...packages].filter((p) => ![...PACKAGES, '@temporalio/interceptors-opentelemetry'].includes(p)),
    [],
  );
});
