import { test } from 'node:test';
import assert from 'node:assert/strict';
import { noProgressBoundMs, ProgressWatch } from '../../activities/sliceWatchdog.js';

test('the no-progress bound: the lanes of one endpoint slot, each attempt within llm.timeoutMs and its longest back-off', () => {
  assert.equal(noProgressBoundMs({ timeoutMs: 120_000, retry: { maxAttempts: 6, baseDelayMs: 1000, maxDelayMs: 30_000 } }), 600_000);
});

test('a slice stands still only while nothing advances: a stage, a reply, or a move in the lane line each restart the count', () => {
  let now = 0;
  const watch = new ProgressWatch('0-7 of shard 3 (image, answer)', 10_000, () => now);
  now = 10_000;
  assert.equal(watch.stalled(), undefined, 'at the bound: not yet');
  watch.advanced();
  now = 20_000;
  assert.equal(watch.stalled(), undefined);
  watch.inLine({ ahead: 5, waiting: 8 });
  now = 25_000;
  watch.inLine({ ahead: 5, waiting: 8 });
  watch.inLine({ ahead: 6, waiting: 8 }); // another, older slice came in ahead: no progress
  assert.match(watch.stalled()?.message ?? '', /^slice 0-7 of shard 3 \(image, answer\) made no progress for 15\.0 s /);
  watch.inLine({ ahead: 2, waiting: 8 }); // the line moved
  now = 34_000;
  assert.equal(watch.stalled(), undefined);
  watch.inLine({ ahead: 0, waiting: 7 }); // one of its samples took a lane
  now = 44_500;
  const failure = watch.stalled();
  assert.equal(failure?.type, 'SliceMadeNoProgress');
  assert.equal(failure?.nonRetryable, false);
  assert.equal(
    failure?.message,
    'slice 0-7 of shard 3 (image, answer) made no progress for 10.5 s (no sample advanced a stage, no model reply came, no move in the lane line; the bound is 10.0 s, 4 x (llm.timeoutMs + llm.retry.maxDelayMs)): its attempt failed, to be retried',
  );
});
