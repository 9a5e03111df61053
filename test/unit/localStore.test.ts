import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { LocalStore } from '../../storage/localStore.js';

test('writes and reads whole objects; a folder removed behind its back is made again; no temp file is left', async () => {
  const root = await mkdtemp(path.join(tmpdir(), 'mmif-localstore-'));
  try {
    const store = new LocalStore(root);
    assert.equal(await store.get('a/b/c.json'), undefined);
    await store.put('a/b/c.json', '{"x":1}');
    assert.equal((await store.get('a/b/c.json'))!.toString(), '{"x":1}');
    await rm(path.join(root, 'a'), { recursive: true }); // e.g. another process cleaned the folder
    await store.put('a/b/d.json', Buffer.from('second'));
    assert.equal((await store.get('a/b/d.json'))!.toString(), 'second');
    assert.equal(await store.putIfAbsent('a/b/d.json', 'third'), false);
    assert.equal(await store.putIfAbsent('a/e.json', 'first'), true);
    assert.deepEqual((await readdir(path.join(root, 'a/b'))).sort(), ['d.json']);
    assert.deepEqual((await readdir(path.join(root, 'a'))).sort(), ['b', 'e.json']);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
