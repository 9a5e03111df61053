import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ModelCaller } from '../../llm/modelCaller.js';
import type { CallRecord } from '../../llm/callRecord.js';
import { limiterSnapshots } from '../../llm/limiter.js';
import { replicaOrder } from '../../llm/replicaRouting.js';
import { withTallies } from '../../llm/tallyScope.js';
import type { ReplicaTally } from '../../domain/replicaShares.js';
import { sha256Hex } from '../../domain/hashing.js';
import { renderInstructionPrompt } from '../../prompts/instructionPrompt.js';
import { startSimulator, type SimulatorHandle } from '../../simulator/server.js';
import { endpointLabel } from '../../telemetry/metrics.js';
import { defaultLlmSettings } from '../harness/llmSettings.js';
import { LocalStore } from '../../storage/localStore.js';

let sims: SimulatorHandle[];
let dir: string;
const llm = { ...defaultLlmSettings(), retry: { maxAttempts: 4, baseDelayMs: 20, maxDelayMs: 50 } };
/** Twelve images of their own: the router is the worker's, so an image a test placed stays placed for the next test. */
const imagesOf = (tag: string) => Array.from({ length: 12 }, (_, i) => ({ jpeg: Buffer.from(`${tag} image ${i}`), sha256: sha256Hex(`${tag} image ${i}`) }));
type Image = ReturnType<typeof imagesOf>[number];
const prompts = ['Describe it.', 'Count the objects.', 'Name the colours.'].map((p) => renderInstructionPrompt([p]));

before(async () => {
  sims = await Promise.all([0, 1, 2].map(() => startSimulator({ seed: 5 })));
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-replicas-'));
});
after(async () => {
  await Promise.all(sims.map((s) => s.close().catch(() => {})));
  await rm(dir, { recursive: true, force: true });
});

const endpoint = () => ({
  model: 'mmif-sim-vlm',
  baseUrls: [sims[0]!.url, { baseUrl: sims[1]!.url, concurrency: 3 }, sims[2]!.url],
  apiKeyEnv: 'MMIF_TEST_UNSET_KEY',
  concurrency: 16,
  batch: false,
});
const caller = (store: LocalStore) =>
  new ModelCaller(store, '_cache/llm', llm, { limits: (replica) => ({ concurrency: replica.concurrency, requestsPerMinute: replica.requestsPerMinute }) });
const home = (image: Image) =>
  replicaOrder(
    image.sha256,
    sims.map((s) => s.url),
  )[0]!;

/** Every prompt of every image: all at once, or one image at a time (its prompts together). */
async function askAll(models: ModelCaller, images: readonly Image[], tally: ReplicaTally, calls: CallRecord[], oneImageAtATime = false): Promise<string[]> {
  const ask = (image: Image) => Promise.all(prompts.map((prompt) => models.text({ stage: 'instruction', endpoint: endpoint(), prompt, image }, calls)));
  return withTallies({ failedAttempts: {}, replicas: tally }, async () => {
    if (!oneImageAtATime) return (await Promise.all(images.map(ask))).flat();
    const replies: string[] = [];
    for (const image of images) replies.push(...(await ask(image)));
    return replies;
  });
}

const routedBy = (tally: ReplicaTally) => Object.fromEntries(Object.entries(tally).map(([replica, c]) => [replica, c.routed]));
const servedBy = () => Object.fromEntries(sims.filter((s) => s.stats().requests > 0).map((s) => [endpointLabel(s.url), s.stats().requests]));

test('every request of a sample goes to the replica its image hash picks, below its limit', async () => {
  const tally: ReplicaTally = {};
  const images = imagesOf('spread');
  await askAll(caller(new LocalStore(path.join(dir, 'spread'))), images, tally, [], true);
  for (const sim of sims) {
    const homed = images.filter((image) => home(image) === sim.url).length;
    assert.equal(sim.stats().requests, homed * prompts.length, `${sim.url} serves exactly its images' requests`);
  }
  assert.ok(sims.filter((s) => s.stats().requests > 0).length >= 2, 'the images spread over the replicas');
  assert.deepEqual(routedBy(tally), servedBy());
  assert.equal(
    Object.values(tally).reduce((n, c) => n + c.spilled + c.rerouted, 0),
    0,
  );
});

test('a replica at its own limit spills to the next replica, counted; each replica has its own limiter', async () => {
  for (const sim of sims) sim.resetStats();
  const tally: ReplicaTally = {};
  const images = imagesOf('spill');
  const homedAtThree = images.filter((image) => home(image) === sims[1]!.url).length * prompts.length;
  assert.ok(homedAtThree > 3, `the replica limited to 3 is home to ${homedAtThree} requests at once`);
  await askAll(caller(new LocalStore(path.join(dir, 'spill'))), images, tally, []);
  assert.deepEqual(routedBy(tally), servedBy());
  assert.ok(sims[1]!.stats().maxInFlight <= 3, `the replica limited to 3 had ${sims[1]!.stats().maxInFlight} in flight`);
  const spilled = Object.values(tally).reduce((n, c) => n + c.spilled, 0);
  assert.ok(spilled > 0, 'images of the replica limited to 3 spilled');
  // A spilled image's requests all went where it was placed: each image encoded on one replica only.
  assert.equal(
    sims.reduce((n, s) => n + s.stats().vision.encodings, 0),
    images.length,
  );
  const limiters = limiterSnapshots().map((s) => s.concurrency);
  assert.ok(limiters.includes(3) && limiters.includes(16), `one limiter per replica, each at its limit: ${limiters.join(', ')}`);
});

test('a replica that goes down is taken out: its samples re-route, nothing fails, and replies it paid for are not paid again', async () => {
  for (const sim of sims) sim.resetStats();
  const store = new LocalStore(path.join(dir, 'down'));
  const images = imagesOf('down');
  const before = await askAll(caller(store), images, {}, [], true);
  const victim = sims.find((s) => s !== sims[1] && s.stats().requests > 0)!;
  await victim.close();
  for (const sim of sims) sim.resetStats();

  // The same requests again (a re-run after the replica died): all answered from the cache, none paid twice.
  const replayed: CallRecord[] = [];
  assert.deepEqual(await askAll(caller(store), images, {}, replayed), before);
  assert.ok(replayed.every((c) => c.cached));
  assert.equal(
    sims.reduce((n, s) => n + (s === victim ? 0 : s.stats().requests), 0),
    0,
  );

  // New requests of the victim's images: taken to their next replica, counted as re-routed, every one answered.
  const tally: ReplicaTally = {};
  const calls: CallRecord[] = [];
  const fresh = caller(new LocalStore(path.join(dir, 'down-fresh')));
  const replies = await askAll(fresh, images, tally, calls, true);
  assert.equal(replies.length, images.length * prompts.length);
  assert.equal(calls.filter((c) => !c.cached).length, replies.length);
  const victimLabel = endpointLabel(victim.url);
  assert.equal(tally[victimLabel]?.ejections, 1, 'taken out once');
  const rerouted = Object.values(tally).reduce((n, c) => n + c.rerouted, 0);
  const victimImages = images.filter((image) => home(image) === victim.url).length;
  // The first request to reach it finds it down and is re-routed on its next attempt; every later one at once.
  assert.equal(rerouted, victimImages * prompts.length, `the victim's requests re-route`);
  for (const image of images) {
    if (home(image) !== victim.url) continue;
    const next = replicaOrder(
      image.sha256,
      sims.filter((s) => s !== victim).map((s) => s.url),
    )[0]!;
    assert.ok(sims.find((s) => s.url === next)!.stats().requests > 0, `${next} took the victim's image`);
  }
});

test("a replica answering 5xx is taken out at the third in a row: the request's next attempt re-routes and is answered", async () => {
  const [failing, healthy] = await Promise.all([startSimulator({ seed: 5, faults: { rate500: 1 } }), startSimulator({ seed: 5 })]);
  try {
    const urls = [failing.url, healthy.url];
    const image = imagesOf('5xx').find((i) => replicaOrder(i.sha256, urls)[0] === failing.url)!;
    const models = caller(new LocalStore(path.join(dir, 'server-errors')));
    const tally: ReplicaTally = {};
    const pair = { model: 'mmif-sim-vlm', baseUrls: urls, apiKeyEnv: 'MMIF_TEST_UNSET_KEY', concurrency: 4, batch: false };
    const reply = await withTallies({ failedAttempts: {}, replicas: tally }, () => models.text({ stage: 'instruction', endpoint: pair, prompt: prompts[0]!, image }, []));
    assert.ok(reply.length > 0);
    assert.equal(failing.stats().requests, 3, 'three 5xx in a row, then out');
    assert.equal(healthy.stats().completed, 1);
    assert.deepEqual(tally[endpointLabel(failing.url)], { routed: 3, spilled: 0, rerouted: 0, ejections: 1 });
    assert.deepEqual(tally[endpointLabel(healthy.url)], { routed: 1, spilled: 0, rerouted: 1, ejections: 0 });
  } finally {
    await Promise.all([failing.close(), healthy.close()]);
  }
});
