/**
 * A full disk names its folder, the key being written and the free space (issue 34: `ENOSPC: no
 * space left on device, write` named no path). /dev/full answers every write with ENOSPC, so a
 * local store rooted at /dev appending to `full` meets a real full device; other local errors
 * (a missing file) pass as they are.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openStore } from '../../storage/openStore.js';

test('a write the disk refuses for space names the disk folder, the key and the free space; the error keeps its code', async () => {
  const store = openStore('/dev');
  const err = await store.appendLine('full', 'a line').then(
    () => assert.fail('/dev/full accepted a write'),
    (e: unknown) => e as NodeJS.ErrnoException,
  );
  assert.equal(err.code, 'ENOSPC');
  assert.match(err.message, /^disk \/dev: no space left on the device writing 'full' \(\d+ MB free of \d+ MB\): ENOSPC: no space left on device, write$/);
  assert.ok(err.stack?.startsWith(`Error: ${err.message}\n`), `a logged error shows the named message: ${err.stack}`);
});

test('an answer of the disk about a path (nothing there) is not renamed', async () => {
  const store = openStore('/dev');
  assert.equal(await store.get('mmif-no-such-file'), undefined);
});
