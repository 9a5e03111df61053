/**
 * Every TypeScript file's header (its leading block or line comments) is about ten lines: it says why
 * the module exists; history and measurements go to docs/adr/ (one decision each, with its figure),
 * reference detail next to what it describes. The limit counts the comment's own lines, delimiters
 * included, so ten lines of text fit. Every file of the product's folders has one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PRODUCT_FOLDERS } from '../harness/productFolders.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const MAX_HEADER_LINES = 12;
/** Not the project's source: installed packages and tools, and what runs leave behind (.gitignore). */
const SKIP = new Set(['node_modules', 'tools', 'out', '.tmp', 'test-artifacts', '.mmif', '.git']);

/** The repo's TypeScript files, repo-relative. */
async function sourceFiles(dir = ''): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await readdir(path.join(REPO, dir), { withFileTypes: true })) {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory() && !SKIP.has(entry.name)) files.push(...(await sourceFiles(rel)));
    else if (entry.isFile() && /\.m?ts$/.test(entry.name)) files.push(rel);
  }
  return files;
}

/** The lines of `text`'s header: a leading `/* ... *\/` block, or a run of leading `//` lines (after a shebang and blank lines). */
function headerLines(text: string): number {
  const lines = text.split('\n');
  let i = 0;
  while (i < lines.length && (lines[i]!.startsWith('#!') || lines[i]!.trim() === '')) i++;
  const start = i;
  if (lines[i]?.trimStart().startsWith('/*')) {
    while (i < lines.length && !lines[i]!.includes('*/')) i++;
    return i - start + 1;
  }
  while (i < lines.length && lines[i]!.trimStart().startsWith('//')) i++;
  return i - start;
}

test('every TypeScript file of the repo has a header of about ten lines, and every product file one at all', async () => {
  const files = await sourceFiles();
  assert.ok(files.length > 300, `read ${files.length} files`);
  const long: string[] = [];
  const missing: string[] = [];
  for (const file of files) {
    const n = headerLines(await readFile(path.join(REPO, file), 'utf8'));
    if (n > MAX_HEADER_LINES) long.push(`${file}: ${n} lines`);
    if (n === 0 && PRODUCT_FOLDERS.includes(file.split(path.sep)[0]!)) missing.push(file);
  }
  assert.deepEqual(long, []);
  assert.deepEqual(missing, [], 'product files without a header saying why the module exists');
});

test('the count takes a block comment whole, a run of line comments, and skips a shebang', () => {
  const block = `/**\n${' * why\n'.repeat(10)} */\nimport x from 'y';\n// not the header`;
  assert.equal(headerLines(block), 12);
  assert.equal(headerLines(`#!/usr/bin/env node\n\n${'// why\n'.repeat(13)}const a = 1;`), 13);
  assert.equal(headerLines("import x from 'y';\n/** later */"), 0);
});
