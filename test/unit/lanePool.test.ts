import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LanePool } from '../../pipeline/run/lanePool.js';
import { throughLanes } from '../../pipeline/run/runStage.js';
import { MIN_SHARDS_IN_FLIGHT, sampleLanes, shardsToFeedLanes, workerLanes } from '../../domain/sampleLanes.js';
import type { SourceSample } from '../../domain/sample.js';

/** Resolves once every callback queued so far has run (a lane handed over resolves a promise). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** Acquires in `order` and records when the lane is taken; returns the release once it is. */
function taker(pool: LanePool, name: string, order: number[], taken: string[], signal?: AbortSignal): Promise<() => void> {
  return pool.acquire(order, signal).then((release) => {
    taken.push(name);
    return release;
  });
}

test('a freed lane goes to the waiting sample lowest in order (oldest slice first, then shard and place), ties by arrival', async () => {
  const pool = new LanePool(1);
  const taken: string[] = [];
  const first = taker(pool, 'first', [50, 0, 0], taken);
  const later = taker(pool, 'later slice', [40, 9, 0], taken);
  const older1 = taker(pool, 'older slice, sample 1', [10, 3, 1], taken);
  const older0 = taker(pool, 'older slice, sample 0', [10, 3, 0], taken);
  const tieA = taker(pool, 'tie a', [20, 1], taken);
  const tieB = taker(pool, 'tie b', [20, 1], taken);
  await settle();
  assert.deepEqual(taken, ['first']);
  assert.equal(pool.waiting, 5);
  for (const next of [first, older0, older1, tieA, tieB, later]) {
    (await next)();
    await settle();
  }
  assert.deepEqual(taken, ['first', 'older slice, sample 0', 'older slice, sample 1', 'tie a', 'tie b', 'later slice']);
  assert.equal(pool.inUse, 0);
  assert.equal(pool.waiting, 0);
});

test('a release is counted once however often it is called, and lanes beyond the first admit at once', async () => {
  const pool = new LanePool(2);
  const taken: string[] = [];
  const a = await taker(pool, 'a', [0], taken);
  await taker(pool, 'b', [1], taken);
  const c = taker(pool, 'c', [2], taken);
  const d = taker(pool, 'd', [3], taken);
  await settle();
  assert.equal(pool.inUse, 2);
  a();
  a(); // a second call must not free a lane the next sample now holds
  await settle();
  assert.deepEqual(taken, ['a', 'b', 'c']);
  assert.equal(pool.inUse, 2);
  assert.equal(pool.waiting, 1);
  (await c)();
  (await d)();
});

test('an abort takes a waiting sample out of line at once with its reason; a sample holding a lane keeps it', async () => {
  const pool = new LanePool(1);
  const holder = new AbortController();
  const release = await pool.acquire([0], holder.signal);
  const cancelled = new AbortController();
  const waiting = pool.acquire([1], cancelled.signal);
  const next = pool.acquire([2]);
  await settle();
  assert.equal(pool.waiting, 2);
  cancelled.abort(new Error('activity cancelled'));
  await assert.rejects(waiting, /activity cancelled/);
  assert.equal(pool.waiting, 1);
  holder.abort(new Error('too late'));
  assert.equal(pool.inUse, 1, 'the holder keeps its lane until it releases it');
  release();
  (await next)();
  assert.equal(pool.inUse, 0);
  // Already aborted: never joins the line.
  await assert.rejects(pool.acquire([3], cancelled.signal), /activity cancelled/);
  assert.equal(pool.waiting, 0);
});

test('resizing admits waiting samples at once when lanes are added, and lets holders end first when removed', async () => {
  const pool = new LanePool(1);
  const taken: string[] = [];
  const a = await taker(pool, 'a', [0], taken);
  const b = taker(pool, 'b', [1], taken);
  const c = taker(pool, 'c', [2], taken);
  await settle();
  pool.resize(3);
  await settle();
  assert.deepEqual(taken, ['a', 'b', 'c']);
  pool.resize(1);
  const d = taker(pool, 'd', [3], taken);
  a();
  (await b)();
  await settle();
  assert.deepEqual(taken, ['a', 'b', 'c'], 'two lanes still held: d waits');
  (await c)();
  await settle();
  assert.deepEqual(taken, ['a', 'b', 'c', 'd']);
  (await d)();
  assert.throws(() => pool.resize(0), /at least one lane/);
});

const samples = (n: number): SourceSample[] => Array.from({ length: n }, (_, i) => ({ sampleId: `s${i}` }) as SourceSample);

test("a slice's failure takes its waiting samples out of line, frees every lane it held, and fails with the first error", async () => {
  const pool = new LanePool(2);
  const started: string[] = [];
  const block: Record<string, { resolve: () => void; reject: (err: Error) => void }> = {};
  const slice = throughLanes({ pool, order: [0, 1, 0] }, samples(5), (sample) => {
    started.push(sample.sampleId);
    return new Promise<void>((resolve, reject) => (block[sample.sampleId] = { resolve, reject }));
  });
  await settle();
  assert.deepEqual(started, ['s0', 's1']);
  const other = pool.acquire([1_000]); // another slice, scheduled later: in line behind this one's samples
  block.s1!.resolve();
  await settle();
  assert.deepEqual(started, ['s0', 's1', 's2'], "a freed lane goes to this slice's next sample first");
  assert.equal(pool.waiting, 3);
  block.s0!.reject(new Error('store outage'));
  await settle();
  assert.deepEqual(started, ['s0', 's1', 's2'], 's3 and s4 never start');
  assert.equal(pool.waiting, 0, "the failed slice's samples left the line, and its lane went to the other slice");
  const otherRelease = await other;
  block.s2!.resolve(); // the slice ends once its samples holding lanes have
  await assert.rejects(slice, /store outage/);
  otherRelease();
  assert.equal(pool.inUse, 0, 'every lane was released');
});

test('a slice in its tail gives its lanes to the next slice at once: lanes stay busy while samples wait', async () => {
  const pool = new LanePool(4);
  let busiest = 0;
  let idleWhileWaiting = 0;
  const ends: Array<() => void> = [];
  const run = () =>
    new Promise<void>((resolve) => {
      ends.push(resolve);
      busiest = Math.max(busiest, pool.inUse);
    });
  const first = throughLanes({ pool, order: [0] }, samples(4), run);
  const second = throughLanes({ pool, order: [1] }, samples(4), run);
  await settle();
  assert.equal(ends.length, 4);
  // The first slice's samples end one by one; each freed lane goes to the second slice at once.
  for (let i = 0; i < 4; i++) {
    ends[i]!();
    await settle();
    if (pool.inUse < 4 && pool.waiting > 0) idleWhileWaiting += 1;
  }
  await first;
  assert.equal(ends.length, 8);
  assert.equal(idleWhileWaiting, 0);
  for (const end of ends.slice(4)) end();
  await second;
  assert.equal(busiest, 4);
});

test('lanes and shards in flight follow the endpoint slots', () => {
  assert.equal(sampleLanes(256), 1024);
  assert.equal(workerLanes(256, 2), 512);
  assert.equal(workerLanes(1, 8), 1, 'every worker gets a lane');
  // 512 slots: 2,048 lanes, 3,072 samples dispatched, 128 per shard (4 slices of 32).
  assert.equal(shardsToFeedLanes(512, { shardSize: 128, sliceSize: 32, parallelSlices: 4 }), 24);
  // A shard runs 4 slices at once: a shard of 256 in slices of 16 dispatches 64.
  assert.equal(shardsToFeedLanes(64, { shardSize: 256, sliceSize: 16, parallelSlices: 4 }), 6);
  assert.equal(shardsToFeedLanes(4, { shardSize: 256, sliceSize: 16, parallelSlices: 4 }), MIN_SHARDS_IN_FLIGHT, 'a few shards even for a small endpoint');
});

test("a slice's place in line: the samples waiting ahead of its first one, and its own still waiting; both fall as lanes free", async () => {
  const pool = new LanePool(1);
  const taken: string[] = [];
  const holder = await taker(pool, 'holder', [1, 0, 0], taken);
  const older = [0, 1].map((i) => taker(pool, `older ${i}`, [5, 0, i], taken));
  const slice = [0, 1, 2].map((i) => taker(pool, `slice ${i}`, [7, 2, 0, i], taken));
  void taker(pool, 'younger', [9, 0, 0], taken);
  await settle();
  assert.deepEqual(pool.place([7, 2, 0]), { ahead: 2, waiting: 3 });
  assert.deepEqual(pool.place([7, 2, 1]), { ahead: 5, waiting: 0 }, 'a slice with no sample in line: all the line up to where it would stand');
  holder();
  await settle();
  assert.deepEqual(pool.place([7, 2, 0]), { ahead: 1, waiting: 3 });
  (await older[0]!)();
  (await older[1]!)();
  await settle();
  assert.deepEqual(pool.place([7, 2, 0]), { ahead: 0, waiting: 2 }, 'its first sample holds the lane now');
  (await slice[0]!)();
  (await slice[1]!)();
  (await slice[2]!)();
});
