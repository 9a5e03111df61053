/**
 * A mistyped flag is answered with the closest flag of that command (config/commandFlags.ts), as a
 * mistyped config field is. The real CLI's answers are in test/integration/commandFlags.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseFlags } from '../../config/commandFlags.js';
import { closestName } from '../../domain/closestName.js';

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
