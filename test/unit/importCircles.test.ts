/**
 * No module of pipeline/ or llm/ imports, directly or through others, a module that imports it back:
 * type-only imports count too, since a circle of types ties the modules together just the same. The
 * test reads each module's import statements (static and dynamic) and names every circle it finds.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const FOLDERS = ['pipeline', 'llm'];

/** The repo-relative modules `file` (repo-relative, with `/`) imports by a relative path. */
function importsOf(file: string, text: string): string[] {
  const specs = [...text.matchAll(/(?:^\s*(?:import|export)\b[^'";]*?\bfrom\s*|\bimport\(\s*)'(\.{1,2}\/[^']+)'/gm)].map((m) => m[1]!);
  return specs.map((spec) => path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)).replace(/\.js$/, '.ts'));
}

/** The circles of a graph (module -> modules it imports): each strongly connected set of more than one module, sorted. */
function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const found: string[][] = [];
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const set: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      set.push(w);
    } while (w !== v);
    if (set.length > 1 || graph.get(v)!.includes(v)) found.push(set.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

test('no import circle inside pipeline/ or llm/', async () => {
  const graph = new Map<string, string[]>();
  for (const folder of FOLDERS) {
    for (const entry of await readdir(path.join(REPO, folder), { withFileTypes: true, recursive: true })) {
      if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
      const file = path.relative(REPO, path.join(entry.parentPath, entry.name)).split(path.sep).join('/');
      graph.set(file, importsOf(file, await readFile(path.join(REPO, file), 'utf8')));
    }
  }
  assert.ok(graph.size > 80, `read ${graph.size} modules`);
  assert.deepEqual(circles(graph), []);
});

test('the check finds a circle through type-only, re-exporting and dynamic imports, and passes a chain', () => {
  const sources: Record<string, string> = {
    'llm/a.ts': "import type { B } from './b.js';\nimport {\n  x,\n  y,\n} from '../pipeline/c.js';",
    'llm/b.ts': "export { z } from './a.js';",
    'pipeline/c.ts': "const d = await import('./d.js');",
    'pipeline/d.ts': "import { a } from '../llm/a.js';",
    'pipeline/e.ts': "import { c } from './c.js';",
  };
  const graph = new Map(Object.entries(sources).map(([file, text]) => [file, importsOf(file, text)]));
  assert.deepEqual(circles(graph), [['llm/a.ts', 'llm/b.ts', 'pipeline/c.ts', 'pipeline/d.ts']]);
  graph.set('pipeline/d.ts', []);
  assert.deepEqual(circles(graph), [['llm/a.ts', 'llm/b.ts']]);
  graph.set('llm/b.ts', []);
  assert.deepEqual(circles(graph), []);
});
