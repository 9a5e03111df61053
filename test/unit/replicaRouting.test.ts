import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BACKOFF_MS, ReplicaRouter, SERVER_ERROR_RUN, replicaOrder } from '../../llm/replicaRouting.js';
import { sha256Hex } from '../../domain/hashing.js';

const urls = ['http://gpu0:8000/v1', 'http://gpu1:8000/v1', 'http://gpu2:8000/v1'];
const images = Array.from({ length: 3_000 }, (_, i) => sha256Hex(`image-${i}`));
const idle = () => false;

function clockAt(start: number) {
  const clock = { t: start, now: () => clock.t };
  return clock;
}

test('every request of one image goes to one replica, and images spread evenly over the replicas', () => {
  const router = new ReplicaRouter(urls, clockAt(0));
  for (const image of images) {
    const first = router.pick(image, idle).baseURL;
    for (let call = 0; call < 10; call++) assert.equal(router.pick(image, idle).baseURL, first);
  }
  for (const share of router.shares()) {
    const fraction = share.routed / (images.length * 11);
    assert.ok(fraction > 0.28 && fraction < 0.39, `${share.baseURL} took ${fraction}`);
    assert.equal(share.spilledIn + share.reroutedIn, 0);
  }
});

test('adding or removing a replica moves only the images it wins or won', () => {
  const before = images.map((image) => replicaOrder(image, urls)[0]);
  const removed = images.map((image) => replicaOrder(image, urls.slice(0, 2))[0]);
  let moved = 0;
  images.forEach((_, i) => {
    if (before[i] !== urls[2]) assert.equal(removed[i], before[i]);
    else moved++;
  });
  assert.ok(moved > 0);
  const added = images.map((image) => replicaOrder(image, [...urls, 'http://gpu3:8000/v1'])[0]);
  images.forEach((_, i) => assert.ok(added[i] === before[i] || added[i] === 'http://gpu3:8000/v1'));
});

test('a replica at its limit spills to the next in the image order, counted; below it, the image goes home again', () => {
  const router = new ReplicaRouter(urls, clockAt(0));
  const image = images[0]!;
  const [home, next] = replicaOrder(image, urls);
  assert.equal(router.pick(image, (url) => url === home).baseURL, next);
  assert.equal(router.pick(image, () => false).baseURL, home);
  // Every replica full: the home replica, whose limiter queues the request.
  assert.equal(router.pick(image, () => true).baseURL, home);
  const shares = new Map(router.shares().map((s) => [s.baseURL, s]));
  assert.equal(shares.get(next!)!.spilledIn, 1);
  assert.equal(shares.get(home!)!.routed, 2);
});

test('a replica refusing connections is out for a back-off, its images re-route (counted) and come back on their own; a repeat doubles it', () => {
  const clock = clockAt(1_000);
  const router = new ReplicaRouter(urls, clock);
  const image = images[1]!;
  const [home, next] = replicaOrder(image, urls);
  router.failed(home!, 'connect');
  assert.equal(router.pick(image, idle).baseURL, next);
  assert.equal(router.shares().find((s) => s.baseURL === home)!.outUntil, 1_000 + BACKOFF_MS);
  clock.t += BACKOFF_MS - 1;
  assert.equal(router.pick(image, idle).baseURL, next);
  clock.t += 1;
  assert.equal(router.pick(image, idle).baseURL, home);
  router.failed(home!, 'connect');
  clock.t += BACKOFF_MS;
  assert.equal(router.pick(image, idle).baseURL, next, 'a second failure in a row doubles the back-off');
  clock.t += BACKOFF_MS;
  assert.equal(router.pick(image, idle).baseURL, home);
  const shares = new Map(router.shares().map((s) => [s.baseURL, s]));
  assert.equal(shares.get(home!)!.ejections, 2);
  assert.equal(shares.get(next!)!.reroutedIn, 3);
  assert.equal(shares.get(home!)!.outUntil, undefined);
});

test('a run of 5xx replies takes a replica out; a reply in between ends the run', () => {
  const router = new ReplicaRouter(urls, clockAt(0));
  const image = images[2]!;
  const [home] = replicaOrder(image, urls);
  for (let i = 1; i < SERVER_ERROR_RUN; i++) router.failed(home!, 'server-error');
  router.succeeded(home!);
  for (let i = 1; i < SERVER_ERROR_RUN; i++) router.failed(home!, 'server-error');
  assert.equal(router.pick(image, idle).baseURL, home);
  router.failed(home!, 'server-error');
  assert.notEqual(router.pick(image, idle).baseURL, home);
});

test('with every replica out, a request goes to the one back soonest', () => {
  const clock = clockAt(0);
  const router = new ReplicaRouter(urls, clock);
  router.failed(urls[1]!, 'connect');
  clock.t = 10;
  router.failed(urls[0]!, 'connect');
  router.failed(urls[2]!, 'connect');
  assert.equal(router.pick(images[3]!, idle).baseURL, urls[1]);
});
