import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { LocalStore } from '../../storage/localStore.js';
import { createJson, getCreatedJson, StoreError } from '../../storage/objectStore.js';

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

test('reads through links only where they stay inside the root, also in folders it has read plain files from', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'mmif-localstore-links-'));
  try {
    const root = path.join(dir, 'root');
    await mkdir(path.join(root, 'a'), { recursive: true });
    await writeFile(path.join(root, 'a', 'plain.json'), 'plain');
    await writeFile(path.join(dir, 'secret.txt'), 'secret');
    await mkdir(path.join(dir, 'outside'));
    await writeFile(path.join(dir, 'outside', 'x.json'), 'outside');
    const store = new LocalStore(root);
    // The folder is known to be inside once a plain file was read from it; links in it are still checked.
    assert.equal((await store.get('a/plain.json'))!.toString(), 'plain');
    await symlink('plain.json', path.join(root, 'a', 'in.json'));
    await symlink('../../secret.txt', path.join(root, 'a', 'out.json'));
    assert.equal((await store.get('a/in.json'))!.toString(), 'plain');
    await assert.rejects(store.get('a/out.json'), (e: unknown) => e instanceof StoreError && e.code === 'escapes-root');
    // A linked folder leading outside: none of its files are read.
    await symlink('../outside', path.join(root, 'b'));
    await assert.rejects(store.get('b/x.json'), (e: unknown) => e instanceof StoreError && e.code === 'escapes-root');
    assert.equal(await store.get('b/missing.json'), undefined);
    assert.equal(await store.get('c/missing.json'), undefined);
    // Ranged and streamed reads reach a file as get does.
    const refused = (e: unknown) => e instanceof StoreError && e.code === 'escapes-root';
    const absent = (e: unknown) => e instanceof StoreError && e.code === 'not-found';
    assert.equal((await store.getRange('a/in.json', 1, 3)).toString(), 'la');
    await assert.rejects(store.getRange('a/out.json', 0, 2), refused);
    await assert.rejects(store.getRange('b/x.json', 0, 2), refused);
    await assert.rejects(store.getRange('c/missing.json', 0, 2), absent);
    await assert.rejects(store.openRead('a/out.json'), refused);
    await assert.rejects(store.openRead('a/missing.json'), absent);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('create writes a new object in place, replaces an existing one whole, and a torn one reads as absent until written again', async () => {
  const root = await mkdtemp(path.join(tmpdir(), 'mmif-localstore-create-'));
  try {
    const store = new LocalStore(root);
    await createJson(store, 'c/d/state.json', { n: 1 });
    assert.deepEqual(await getCreatedJson(store, 'c/d/state.json'), { n: 1 });
    await createJson(store, 'c/d/state.json', { n: 2 }); // a retry's write
    assert.deepEqual(await getCreatedJson(store, 'c/d/state.json'), { n: 2 });
    // A crash between creating the file and writing all of it: cut, empty, or NUL-filled after a power loss.
    for (const torn of ['{"n":3,"calls":[{"a"', '', '\0\0\0\0']) {
      await writeFile(path.join(root, 'c/d/state.json'), torn);
      assert.equal(await getCreatedJson(store, 'c/d/state.json'), undefined);
      await createJson(store, 'c/d/state.json', { n: 3 });
      assert.deepEqual(await getCreatedJson(store, 'c/d/state.json'), { n: 3 });
    }
    assert.deepEqual(await readdir(path.join(root, 'c/d')), ['state.json'], 'no temp file is left');
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test('a write that fails removes its temp file; one left by a killed writer is never listed, and the sweep removes it alone', async () => {
  const root = await mkdtemp(path.join(tmpdir(), 'mmif-localstore-'));
  try {
    const store = new LocalStore(root);
    // The rename fails: a non-empty folder stands where the object goes.
    await mkdir(path.join(root, 'a/x.json'), { recursive: true });
    await writeFile(path.join(root, 'a/x.json/inside'), 'in the way');
    await assert.rejects(store.put('a/x.json', 'body'));
    assert.deepEqual((await readdir(path.join(root, 'a'))).sort(), ['x.json']);

    // A worker killed between writing its temp file and the rename.
    await store.put('b/shard.parquet', 'whole');
    await writeFile(path.join(root, 'b/shard.parquet.tmp-4242-0123456789ab'), 'cut');
    await writeFile(path.join(root, 'b/dataset_info.json.tmp-4242-ba9876543210'), '{');
    await writeFile(path.join(root, 'c.json.tmp-1-aaaaaaaaaaaa'), 'outside the prefix');
    const listed = [];
    for await (const o of store.list('b/')) listed.push(o.key);
    assert.deepEqual(listed, ['b/shard.parquet']);
    assert.deepEqual((await store.sweepIncompleteWrites('b/')).sort(), ['b/dataset_info.json.tmp-4242-ba9876543210', 'b/shard.parquet.tmp-4242-0123456789ab']);
    assert.deepEqual(await readdir(path.join(root, 'b')), ['shard.parquet']);
    assert.equal((await store.get('b/shard.parquet'))!.toString(), 'whole');
    assert.deepEqual(await store.sweepIncompleteWrites('b/'), []);
    assert.ok((await readdir(root)).includes('c.json.tmp-1-aaaaaaaaaaaa'), 'outside the prefix: left alone');
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test('a listing never reads the extraction cache, nor lists an object of its name, unless its prefix is inside it', async () => {
  const root = await mkdtemp(path.join(tmpdir(), 'mmif-localstore-cache-'));
  const store = new LocalStore(root);
  const folders: string[] = [];
  const proto = LocalStore.prototype as unknown as { entries(dirKey: string): Promise<unknown> };
  const entries = proto.entries;
  proto.entries = function (this: LocalStore, dirKey: string) {
    folders.push(dirKey);
    return entries.call(this, dirKey);
  };
  const keys = async (prefix: string) => {
    const out: string[] = [];
    for await (const o of store.list(prefix)) out.push(o.key);
    return out;
  };
  try {
    await store.put('a.tar.gz', 'x');
    await store.put('.mmif-extracted/images/shots/0.png', 'y');
    await store.put('.mmif-extracted/.complete/a.tar.gz.json', '{}');
    await store.put('.mmif-extractedness.txt', 'a file of its own');
    assert.deepEqual(await keys(''), ['.mmif-extractedness.txt', 'a.tar.gz']);
    assert.deepEqual(folders, [''], 'only the root folder is read');
    assert.deepEqual(await keys('.mmif-extracted/'), ['.mmif-extracted/.complete/a.tar.gz.json', '.mmif-extracted/images/shots/0.png']);
    assert.deepEqual(await keys('.mmif-extracted/images/'), ['.mmif-extracted/images/shots/0.png']);
  } finally {
    proto.entries = entries;
    await rm(root, { recursive: true, force: true });
  }
});
