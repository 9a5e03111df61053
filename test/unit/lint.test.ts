/**
 * ESLint (eslint.config.js: typescript-eslint's no-floating-promises and no-misused-promises) over the
 * whole tree, as a test so that both tiers run it and the runner overlaps it with the other files.
 * `npm run lint` runs the same check from the command line.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

test('ESLint finds no floating or misused promise anywhere in the tree', { timeout: 600_000 }, async () => {
  const eslint = new ESLint({ cwd: REPO });
  const results = await eslint.lintFiles(['.']);
  const problems = results.flatMap((r) => r.messages.map((m) => `${path.relative(REPO, r.filePath)}:${m.line}:${m.column} ${m.ruleId ?? ''} ${m.message}`));
  assert.deepEqual(problems, []);
});
