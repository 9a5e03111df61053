import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BACKOFF_MS, ReplicaRouter, FAILURE_RUN, replicaOrder, type ReplicaPick } from '../../llm/replicaRouting.js';
import { sha256Hex } from '../../domain/hashing.js';

const urls = ['http://gpu0:8000/v1', 'http://gpu1:8000/v1', 'http://gpu2:8000/v1'];
const images = Array.from({ length: 3_000 }, (_, i) => sha256Hex(`image-${i}`));
const idle = () => 0;
/** Loads with the replicas named in `full` at their limit. */
const fullAt =
  (...full: Array<string | undefined>) =>
  (url: string) =>
    full.includes(url) ? 1 : 0;

function clockAt(start: number) {
  const clock = { t: start, now: () => clock.t };
  return clock;
}

test('every request of one image goes to its first replica when none is full, and images spread evenly over the replicas', () => {
  const router = new ReplicaRouter(urls, clockAt(0));
  const routed = new Map<string, number>();
  for (const image of images) {
    for (let call = 0; call < 11; call++) {
      const pick = router.pick(image, idle);
      assert.deepEqual(pick, { baseURL: replicaOrder(image, urls)[0] });
      routed.set(pick.baseURL, (routed.get(pick.baseURL) ?? 0) + 1);
    }
  }
  for (const url of urls) {
    const fraction = routed.get(url)! / (images.length * 11);
    assert.ok(fraction > 0.28 && fraction < 0.39, `${url} took ${fraction}`);
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

test('an image whose first replica is at its limit spills to the next, counted, and its later requests stay there even once the first has room', () => {
  const router = new ReplicaRouter(urls, clockAt(0));
  const [image, other] = [images[0]!, images.find((i) => replicaOrder(i, urls)[0] === replicaOrder(images[0]!, urls)[0] && i !== images[0])!];
  const [home, next] = replicaOrder(image, urls);
  assert.deepEqual(router.pick(image, fullAt(home)), { baseURL: next, moved: 'spilled' });
  for (let call = 0; call < 10; call++) assert.deepEqual(router.pick(image, idle), { baseURL: next, moved: 'spilled' }, 'sticks to where its image was encoded');
  // Its image's replica full now: the request waits there (that replica's limiter queues it) rather than encode the image again elsewhere.
  assert.deepEqual(router.pick(image, fullAt(next)), { baseURL: next, moved: 'spilled' });
  // Another image of the same first replica, placed while that one has room, goes there.
  assert.deepEqual(router.pick(other, idle), { baseURL: home });
  // Every replica full: a new image is placed on the least loaded, whose limiter queues it; on its first replica when loads tie.
  const [third, fourth] = [images[5]!, images[6]!];
  const [thirdHome, , thirdLast] = replicaOrder(third, urls);
  assert.deepEqual(
    router.pick(third, (url) => (url === thirdLast ? 1.25 : 1.5)),
    { baseURL: thirdLast, moved: 'spilled' },
  );
  assert.equal(router.pick(third, (url) => (url === thirdHome ? 1 : 2)).baseURL, thirdLast, 'then it stays');
  assert.deepEqual(
    router.pick(fourth, () => Infinity),
    { baseURL: replicaOrder(fourth, urls)[0] },
  );
});

test('placements are bounded load: images arriving together fill every replica to its limit before any replica queues', () => {
  const router = new ReplicaRouter(urls, clockAt(0));
  const limit = 4;
  const inFlight = new Map(urls.map((u) => [u, 0]));
  const loadOf = (url: string) => inFlight.get(url)! / limit;
  const samples = images.slice(0, urls.length * limit);
  let spilled = 0;
  for (const image of samples) {
    const pick = router.pick(image, loadOf);
    inFlight.set(pick.baseURL, inFlight.get(pick.baseURL)! + 1);
    if (pick.moved === 'spilled') spilled++;
  }
  assert.deepEqual([...inFlight.values()], [limit, limit, limit], 'each replica took exactly its limit');
  assert.ok(spilled > 0, 'some images were placed off their first replica');
  // Each sample's next request (its first answered) goes where the sample's image is.
  const placed = new Map(samples.map((image) => [image, router.pick(image, loadOf).baseURL]));
  for (const image of samples) assert.equal(router.pick(image, idle).baseURL, placed.get(image));
  // As many again while all are full: they queue evenly, none more than one ahead of another.
  for (const image of images.slice(samples.length, 2 * samples.length)) {
    const pick = router.pick(image, loadOf);
    inFlight.set(pick.baseURL, inFlight.get(pick.baseURL)! + 1);
  }
  assert.deepEqual([...inFlight.values()], [2 * limit, 2 * limit, 2 * limit], 'each replica queues as many');
});

test('a router remembers the last images it placed, up to its bound', () => {
  const router = new ReplicaRouter(urls, clockAt(0), 2);
  const [a, b, c] = images;
  const [home, next] = replicaOrder(a!, urls);
  assert.equal(router.pick(a!, fullAt(home)).baseURL, next);
  router.pick(b!, idle);
  assert.equal(router.pick(a!, idle).baseURL, next, 'still placed: routing it again made it the most recent');
  router.pick(b!, idle);
  router.pick(c!, idle);
  assert.deepEqual(router.pick(a!, idle), { baseURL: home }, 'forgotten past the bound: placed again, by load');
});

test('a replica refusing connections is out for a back-off: its images re-route (counted) and stay where they went; new images come back on their own; a repeat doubles it', () => {
  const clock = clockAt(1_000);
  const router = new ReplicaRouter(urls, clock);
  const [image, ...more] = images.filter((i) => replicaOrder(i, urls)[0] === urls[0]);
  const [home, next] = replicaOrder(image!, urls);
  assert.deepEqual(router.pick(image!, idle), { baseURL: home });
  assert.equal(router.failed(home!, 'unreachable'), true, 'taken out');
  assert.equal(router.failed(home!, 'unreachable'), false, 'already out');
  const rerouted: ReplicaPick = { baseURL: next!, moved: 'rerouted' };
  assert.deepEqual(router.pick(image!, idle), rerouted);
  clock.t += BACKOFF_MS - 1;
  assert.deepEqual(router.pick(more[0]!, idle).moved, 'rerouted', 'a new image of the replica, still out');
  clock.t += 1;
  assert.deepEqual(router.pick(more[1]!, idle), { baseURL: home }, 'back: a new image of it goes there');
  assert.deepEqual(router.pick(image!, idle), rerouted, 'a re-routed image stays where its encoding now is');
  router.failed(home!, 'unreachable');
  assert.equal(router.pick(more[1]!, idle).moved, 'rerouted', 'an image placed there moves when it is out again');
  clock.t += BACKOFF_MS;
  assert.equal(router.pick(more[2]!, idle).moved, 'rerouted', 'a second failure in a row doubles the back-off');
  clock.t += BACKOFF_MS;
  assert.deepEqual(router.pick(more[3]!, idle), { baseURL: home });
});

test('a run of 5xx replies takes a replica out; a reply in between ends the run', () => {
  const router = new ReplicaRouter(urls, clockAt(0));
  const image = images[2]!;
  const [home] = replicaOrder(image, urls);
  for (let i = 1; i < FAILURE_RUN; i++) assert.equal(router.failed(home!, 'server-error'), false);
  router.succeeded(home!);
  for (let i = 1; i < FAILURE_RUN; i++) router.failed(home!, 'server-error');
  assert.equal(router.pick(image, idle).baseURL, home);
  assert.equal(router.failed(home!, 'server-error'), true);
  assert.deepEqual(router.pick(image, idle).moved, 'rerouted');
});

test('dropped connections count like 5xx replies: a run of them takes a replica out, mixed with 5xx too; one alone does not', () => {
  const router = new ReplicaRouter(urls, clockAt(0));
  const image = images[3]!;
  const [home] = replicaOrder(image, urls);
  assert.equal(router.failed(home!, 'dropped'), false, 'one reset (an idle kept-alive connection the server closed) is not a failing replica');
  router.succeeded(home!);
  for (let i = 1; i < FAILURE_RUN; i++) assert.equal(router.failed(home!, i % 2 ? 'dropped' : 'server-error'), false);
  assert.equal(router.pick(image, idle).baseURL, home);
  assert.equal(router.failed(home!, 'dropped'), true, 'the run takes it out');
  assert.deepEqual(router.pick(image, idle).moved, 'rerouted');
});

test('with every replica out, a request goes to the one back soonest, and its image is placed once one is back', () => {
  const clock = clockAt(0);
  const router = new ReplicaRouter(urls, clock);
  const image = images.find((i) => replicaOrder(i, urls)[0] !== urls[1])!;
  router.failed(urls[1]!, 'unreachable');
  clock.t = 10;
  router.failed(urls[0]!, 'unreachable');
  router.failed(urls[2]!, 'unreachable');
  assert.deepEqual(router.pick(image, idle), { baseURL: urls[1], moved: 'rerouted' });
  clock.t = BACKOFF_MS + 10;
  assert.deepEqual(router.pick(image, idle), { baseURL: replicaOrder(image, urls)[0] }, 'not remembered on the replica it was sent to while all were out');
});
