import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ArchiveWatch } from '../../activities/archiveWatch.js';

test('extracting archives fails its attempt only after reading nothing for the bound, naming the source', () => {
  let now = 0;
  const watch = new ArchiveWatch(() => now, 1_000);
  watch.start('sources[0] (multiui /data/multiui)');
  now = 900;
  watch.read(4096);
  now = 1_800; // 900 ms after the last byte: still moving
  assert.equal(watch.stalled(), undefined);
  now = 2_000; // 1,100 ms after the last byte
  const failure = watch.stalled();
  assert.ok(failure);
  assert.equal(failure.nonRetryable, false);
  assert.equal(failure.type, 'ArchiveStalled');
  assert.match(failure.message, /^sources\[0\] \(multiui \/data\/multiui\): extracting its archives read nothing for 1 s$/);
  assert.equal(watch.bytes, 4096);
});

test('a new source restarts the clock: listing its root before the first byte is not a stall', () => {
  let now = 0;
  const watch = new ArchiveWatch(() => now, 1_000);
  watch.start('sources[0] (cc3m /a)');
  now = 5_000;
  watch.start('sources[1] (multiui /b)');
  now = 5_500;
  assert.equal(watch.stalled(), undefined);
  now = 6_100;
  assert.match(watch.stalled()!.message, /^sources\[1\]/);
});
