import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LruCache } from '../../domain/lruCache.js';

test('an LRU cache keeps at most its capacity, dropping the least recently used entry', () => {
  const cache = new LruCache<number>(2);
  let made = 0;
  const make = (n: number) => () => ((made += 1), n);
  assert.equal(cache.get('a', make(1)), 1);
  assert.equal(cache.get('b', make(2)), 2);
  assert.equal(cache.get('a', make(99)), 1, 'a hit returns the held value');
  assert.equal(made, 2, 'a hit makes nothing');
  cache.get('c', make(3)); // b is the least recently used now
  assert.equal(cache.size, 2);
  assert.ok(cache.has('a') && cache.has('c') && !cache.has('b'));
  assert.equal(cache.get('b', make(4)), 4, 'a dropped key is made again');
  assert.ok(!cache.has('a'), 'then a, unused since, goes');
});

test('deleteIf forgets a key only while it holds that value', () => {
  const cache = new LruCache<object>(4);
  const first = cache.get('k', () => ({}));
  cache.deleteIf('k', {});
  assert.ok(cache.has('k'), 'another value: kept');
  cache.deleteIf('k', first);
  assert.ok(!cache.has('k'));
  assert.throws(() => new LruCache(0), /at least one entry/);
});
