/**
 * S3's listing leaves a source root's extraction cache out without paging through it (storage/s3Store.ts
 * list: at the cache's first key it starts again with StartAfter past the cache), on versitygw: the
 * keys on both sides of the cache are all listed, in order, and the cache only when the prefix is
 * inside it. test/unit/localStore.test.ts checks the same on local disk.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openStore } from '../../storage/openStore.js';
import { s3Backend } from '../fixtures/backends.js';

const backend = s3Backend();
before(() => backend.setUp());
after(() => backend.tearDown());

test('S3: a listing skips the extraction cache unless its prefix is inside it, and lists the keys after it', async () => {
  const store = openStore(backend.freshRoot(), backend.s3);
  const outside = ['.a.txt', '.mmif-extracted0.txt', '.mmif-extractedz/x.json', 'multiui.tar.gz.00', 'z/y.png'];
  const inside = ['.mmif-extracted/.complete/multiui.tar.gz.json', '.mmif-extracted/multiui.tar.gz/shots/0.png', '.mmif-extracted/multiui.tar.gz/shots/1.png'];
  for (const key of [...outside, ...inside]) await store.put(key, key);
  const keys = async (prefix: string) => {
    const out: string[] = [];
    for await (const o of store.list(prefix)) out.push(o.key);
    return out;
  };
  assert.deepEqual(await keys(''), outside);
  assert.deepEqual(await keys('.mmif-extracted/'), inside);
  assert.deepEqual(await keys('.mmif-extracted/multiui.tar.gz/'), inside.slice(1));
  assert.deepEqual(await keys('.mmif'), ['.mmif-extracted0.txt', '.mmif-extractedz/x.json']);
});
