/**
 * The real `mmif` command answers a mistyped flag with the closest flag of that command on one line
 * (exit 2), and each command's usage names the flags it takes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runMmif } from '../harness/mmifCli.js';

test('`mmif build --conifg` ends with the suggestion on one line, exit 2', async () => {
  const result = await runMmif(['build', '--conifg', 'build.json']);
  assert.equal(result.code, 2, result.stdout + result.stderr);
  assert.equal(result.stderr.trim(), "mmif: unknown option '--conifg'; did you mean --config?");
});

test('`mmif export --help` names --holdout in its usage line', async () => {
  const result = await runMmif(['export', '--help']);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stdout.split('\n')[0], 'usage: mmif export --output URI --build-id ID --format trl|mmifeval [--all | --holdout F]');
  assert.match(result.stdout, /^ {2}--holdout F /m, 'and describes it on a line of its own');
});
