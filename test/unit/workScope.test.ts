import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { abortSignal, throwIfAborted, withAbortSignal } from '../../llm/abortScope.js';
import { noteReply, withReplyProgress } from '../../llm/replyProgress.js';
import { tallyFailedAttempt, withTallies } from '../../llm/tallyScope.js';
import { noTallies } from '../../domain/tallies.js';

test('each part of the work in progress is inherited by inner scopes, and set without losing the others', async () => {
  const outer = new AbortController();
  const tallies = noTallies();
  let replies = 0;
  await withAbortSignal(outer.signal, () =>
    withTallies(tallies, () =>
      withReplyProgress(
        () => (replies += 1),
        async () => {
          await Promise.resolve();
          assert.equal(abortSignal(), outer.signal, 'the signal set two scopes out is still the one in force');
          tallyFailedAttempt('transient');
          noteReply();
          const inner = new AbortController();
          await withAbortSignal(inner.signal, async () => {
            assert.equal(abortSignal(), inner.signal, 'an inner signal replaces the outer one');
            tallyFailedAttempt('transient');
          });
          assert.equal(abortSignal(), outer.signal, 'and only inside its own scope');
        },
      ),
    ),
  );
  assert.equal(tallies.failedAttempts.transient, 2, 'both attempts counted into the tallies set outside the inner signal');
  assert.equal(replies, 1);
  assert.equal(abortSignal(), undefined, 'nothing is in force outside every scope');
  outer.abort(new Error('stopped'));
  await withAbortSignal(outer.signal, async () => assert.throws(() => throwIfAborted(), /stopped/));
});

test('the work in progress lives in one AsyncLocalStorage (llm/workScope.ts): each one more costs every await', () => {
  const llm = new URL('../../llm/', import.meta.url);
  const holders = readdirSync(llm).filter((f) => f.endsWith('.ts') && readFileSync(new URL(f, llm), 'utf8').includes('new AsyncLocalStorage'));
  assert.deepEqual(holders, ['workScope.ts']);
});
