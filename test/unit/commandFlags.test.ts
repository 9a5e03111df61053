/**
 * A mistyped flag is answered with the closest flag of that command (config/commandFlags.ts), as a
 * mistyped config field is; each command's usage names the flags it takes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseFlags } from '../../config/commandFlags.js';
import { closestName } from '../../domain/closestName.js';
import { runMmif } from '../harness/mmifCli.js';

const STATUS_FLAGS = { watch: { type: 'boolean' }, json: { type: 'boolean' }, evals: { type: 'boolean' } } as const;

function refusal(args: string[], options: Parameters<typeof parseFlags>[0]['options']): Error & { code?: string } {
  try {
    parseFlags({ args, options, allowPositionals: true });
  } catch (err) {
    return err as Error & { code?: string };
  }
  assert.fail(`${args.join(' ')} was accepted`);
}

test('a mistyped flag gets the closest flag of the command, as a usage error', () => {
  const wach = refusal(['x', '--wach'], STATUS_FLAGS);
  assert.equal(wach.message, "unknown option '--wach'; did you mean --watch?");
  // Still node's parse error, which the CLI exits 2 for.
  assert.equal(wach.code, 'ERR_PARSE_ARGS_UNKNOWN_OPTION');
  assert.equal(refusal(['--Json'], STATUS_FLAGS).message, "unknown option '--Json'; did you mean --json?");
  assert.equal(refusal(['--evlas'], STATUS_FLAGS).message, "unknown option '--evlas'; did you mean --evals?", 'two letters swapped are one edit');
  assert.equal(refusal(['--watch=1'], STATUS_FLAGS).code, 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE', 'other parse errors pass through');
  // Nothing close: node's own message.
  assert.match(refusal(['--verbose'], STATUS_FLAGS).message, /^Unknown option '--verbose'/);
});

test('closestName: a case slip, a letter or two, a swap; nothing for a name far from every known one', () => {
  assert.equal(closestName('shardsize', ['shardSize', 'seed']), 'shardSize');
  assert.equal(closestName('temprature', ['temperature', 'maxTokens']), 'temperature');
  assert.equal(closestName('conifg', ['config', 'wait', 'local']), 'config');
  assert.equal(closestName('output', ['config', 'wait', 'local']), undefined);
});

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
