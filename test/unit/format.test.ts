/**
 * Prettier (.prettierrc.json) over every TypeScript file, as a test so that both tiers run it:
 * a change that is not formatted fails here, not in review. `npm run format:check` runs the same
 * check from the command line; `npx prettier --write <files>` fixes it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import * as prettier from 'prettier';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

test('every TypeScript file is formatted as Prettier formats it', { timeout: 120_000 }, async () => {
  // The tracked files plus new ones not yet committed, minus what .prettierignore names.
  const listed = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.ts'], { cwd: REPO, encoding: 'utf8' });
  const files = listed.split('\n').filter(Boolean);
  assert.ok(files.length > 100, `expected the repository's TypeScript files, found ${files.length}`);
  const unformatted: string[] = [];
  for (const file of files) {
    const filepath = path.join(REPO, file);
    const info = await prettier.getFileInfo(filepath, { ignorePath: path.join(REPO, '.prettierignore') });
    if (info.ignored) continue;
    const options = await prettier.resolveConfig(filepath);
    const source = await readFile(filepath, 'utf8').catch(() => undefined);
    if (source === undefined) continue; // deleted in the work tree, not yet in the index
    if (!(await prettier.check(source, { ...options, filepath }))) unformatted.push(file);
  }
  assert.deepEqual(unformatted, [], `run: npx prettier --write ${unformatted.join(' ')}`);
});
