import { test } from 'node:test';
import assert from 'node:assert/strict';
import { causeChain } from '../../domain/causeChain.js';

test('a cause chain is the error and what it wraps, outermost first, ending at the first cause that is no object', () => {
  const socket = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
  const fetch = new Error('fetch failed', { cause: socket });
  const sdk = Object.assign(new Error('Connection error.', { cause: fetch }), { cause: fetch });
  assert.deepEqual(causeChain(sdk), [sdk, fetch, socket]);
  assert.deepEqual(causeChain(new Error('x', { cause: 'a string' })).length, 1);
  assert.deepEqual(causeChain('no error'), []);
  assert.deepEqual(causeChain({ type: 'ConfigMismatchError', message: 'refused' }), [{ type: 'ConfigMismatchError', message: 'refused' }]);
});

test('a chain that loops is read 20 links deep, not forever', () => {
  const a: { message: string; cause?: unknown } = { message: 'a' };
  a.cause = { message: 'b', cause: a };
  assert.equal(causeChain(a).length, 20);
});
