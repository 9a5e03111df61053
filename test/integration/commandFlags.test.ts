/**
 * The real `mmif` command answers a mistyped flag with the closest flag of that command on one line
 * (exit 2), and each command's usage names the flags it takes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runMmif } from '../harness/mmifCli.js';
import { EXIT } from '../../cli/exitCodes.js';

test('`mmif build --conifg` ends with the suggestion on one line, exit 2', async () => {
  const result = await runMmif(['build', '--conifg', 'build.json']);
  assert.equal(result.code, 2, result.stdout + result.stderr);
  assert.equal(result.stderr.trim(), "mmif: unknown option '--conifg'; did you mean --config?");
});

test('`mmif export --help` names --holdout in its usage line', async () => {
  const result = await runMmif(['export', '--help']);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stdout.split('\n')[0], 'usage: mmif export --output URI --build-id ID --format trl|mmifeval|verl|rlvr|llamafactory-v1 [--all | --holdout F]');
  assert.match(result.stdout, /^ {2}--holdout F /m, 'and describes it on a line of its own');
});

test('`mmif build --help` names --local in its usage line and ends with the exit codes it returns, as cli/exitCodes.ts numbers them', async () => {
  const result = await runMmif(['build', '--help']);
  assert.equal(result.code, 0, result.stderr);
  const lines = result.stdout.trim().split('\n');
  assert.equal(lines[0], 'usage: mmif build --config FILE [--wait | --local] [--new-version]');
  assert.match(
    lines.at(-1)!,
    new RegExp(
      `^ {2}exit codes: ${EXIT.ok} started .*; ${EXIT.failed} the build failed .*; ${EXIT.usage} a bad flag or config, .* with --wait or --local also a build that failed for a config`,
    ),
  );
  assert.doesNotMatch(result.stdout, /exits 1 when the build fails/, 'a --local build failing for its config exits 2, not 1');
  const top = await runMmif(['--help']);
  assert.match(top.stdout, new RegExp(`^exit codes: ${EXIT.ok} ok; ${EXIT.failed} failed; ${EXIT.usage} usage or config error; ${EXIT.notFound} no such build or schedule$`, 'm'));
});
