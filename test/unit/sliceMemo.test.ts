/**
 * SliceMemo (pipeline/run/sliceMemo.ts): a state or image is read once while its sample is in
 * flight, a failed read is tried again, what the execution wrote is answered as the store would
 * return it, and a sample leaving drops its entries (an image another sample still uses stays).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SliceMemo } from '../../pipeline/run/sliceMemo.js';
import type { StageState } from '../../pipeline/run/stageState.js';

const rejected = (reason: string): StageState => ({ status: 'rejected', stage: 'instruction', reason, calls: [] });

test('a state is read once per sample in flight; a failed read is not kept; a sample leaving is read again', async () => {
  const memo = new SliceMemo();
  let reads = 0;
  const read = async () => {
    reads += 1;
    if (reads === 1) throw new Error('store down');
    return rejected('r');
  };
  await assert.rejects(memo.state('s1', 'instruction', read), /store down/);
  const [a, b] = await Promise.all([memo.state('s1', 'instruction', read), memo.state('s1', 'instruction', read)]);
  assert.equal(reads, 2, 'the failed read tried again, then read once for both');
  assert.deepEqual(a, b);
  memo.forget('s1');
  await memo.state('s1', 'instruction', read);
  assert.equal(reads, 3, 'read again once its sample left');
});

test('a state written is answered as a read of the store would: a copy, without the fields set to undefined', async () => {
  const memo = new SliceMemo();
  const written = { ...rejected('r'), details: undefined } as unknown as StageState;
  memo.wrote('s1', 'instruction', written);
  const read = await memo.state('s1', 'instruction', () => assert.fail('not read: it was written'));
  assert.deepEqual(read, rejected('r'));
  assert.ok(!('details' in read!));
  assert.notEqual(read, written);
});

test('an image is kept while a sample in flight uses it, and read once for all of them', async () => {
  const memo = new SliceMemo();
  let reads = 0;
  const read = async () => Buffer.from(`jpeg ${++reads}`);
  memo.storedImage('s1', 'aa', Buffer.from('stored'));
  assert.equal(String(await memo.image('s2', 'aa', read)), 'stored', 'the image s1 stored serves s2 (the same content hash)');
  assert.equal(String(await memo.image('s3', 'bb', read)), 'jpeg 1');
  assert.equal(String(await memo.image('s3', 'bb', read)), 'jpeg 1');
  memo.forget('s1');
  assert.deepEqual(memo.size(), { samples: 0, images: 2 }, 's2 still uses aa');
  memo.forget('s2');
  memo.forget('s3');
  assert.deepEqual(memo.size(), { samples: 0, images: 0 }, 'nothing kept once the samples left');
  assert.equal(String(await memo.image('s3', 'bb', read)), 'jpeg 2', 'read again');
});
