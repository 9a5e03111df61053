/**
 * The simulator as data-parallel replicas (simulator/replicas.ts): each replica keeps its own prefix
 * and vision-encoder caches, a round-robin balancer in front spreads one image's requests over all of
 * them (so each encodes it), a replica that is gone is skipped by the balancer, warm requests cost
 * the GPUs less time; and a build's stages send every request of a sample with the same image bytes
 * and the same id (llm/imageIds.ts), so one replica encodes each image once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { contextFor } from '../../activities/runtime.js';
import { SAMPLES_DIR } from '../../cli/quickstartConfig.js';
import { parseBuildConfig } from '../../config/buildConfig.js';
import type { SourceSample } from '../../domain/sample.js';
import { runStage } from '../../pipeline/run/runStage.js';
import { stageDefinitions } from '../../pipeline/stages/registry.js';
import { GpuFleet } from '../../simulator/gpuProfile.js';
import { PROMPT_CACHE_PRESETS } from '../../simulator/promptCache.js';
import { startReplicas } from '../../simulator/replicas.js';

const IMAGE = `data:image/jpeg;base64,${Buffer.from('the same jpeg bytes every time').toString('base64')}`;

function post(url: string, question: string, id?: string): Promise<Response> {
  const image = { type: 'image_url', image_url: { url: IMAGE }, ...(id ? { uuid: id } : {}) };
  return fetch(`${url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sim' },
    body: JSON.stringify({ model: 'mmif-sim-vlm', messages: [{ role: 'user', content: [image, { type: 'text', text: question }] }] }),
  });
}

test('behind a round-robin balancer each replica encodes the image and caches its prefix for itself; one replica serving them all encodes it once', async () => {
  const set = await startReplicas(3, { seed: 1, promptCache: PROMPT_CACHE_PRESETS.vllm, imageTokens: 256 }, 'round-robin');
  try {
    for (let i = 0; i < 6; i++) assert.equal((await post(set.balancer!.url, `Question ${i} about the picture?`, 'img-1')).status, 200);
    assert.deepEqual(set.balancer!.sent(), [2, 2, 2]);
    const spread = set.replicas.map((r) => r.stats());
    assert.deepEqual(
      spread.map((s) => s.vision),
      [0, 1, 2].map(() => ({ encodings: 1, hits: 1, withId: 2, idConflicts: 0 })),
      'every replica encoded the image once and reused it once',
    );
    // The same six requests to one replica: one encoding, five reuses, and more of the prompt cached.
    const one = set.replicas[0]!;
    one.resetStats();
    for (let i = 0; i < 6; i++) assert.equal((await post(one.url, `Another question ${i} about the picture?`, 'img-1')).status, 200);
    assert.deepEqual(one.stats().vision, { encodings: 0, hits: 6, withId: 6, idConflicts: 0 }, 'held from before');
    const cachedSpread = spread.reduce((sum, s) => sum + s.cachedPromptTokens, 0) / spread.reduce((sum, s) => sum + s.promptTokens, 0);
    const cachedOne = one.stats().cachedPromptTokens / one.stats().promptTokens;
    assert.ok(cachedOne > cachedSpread, `one replica ${cachedOne.toFixed(2)} vs spread ${cachedSpread.toFixed(2)} of the prompt cached`);
    // The same id with other bytes is counted: a server trusting ids would serve the wrong encoding.
    const other = await fetch(`${one.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sim' },
      body: JSON.stringify({
        model: 'mmif-sim-vlm',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image_url', image_url: { url: `${IMAGE}AAAA` }, uuid: 'img-1' },
              { type: 'text', text: 'Hi?' },
            ],
          },
        ],
      }),
    });
    assert.equal(other.status, 200);
    assert.equal(one.stats().vision.idConflicts, 1);
  } finally {
    await set.close();
  }
});

test('the balancer skips a replica that refuses connections, as nginx’s proxy_next_upstream does; none left is a 502', async () => {
  const set = await startReplicas(2, { seed: 1 }, 'round-robin');
  try {
    await set.kill(0);
    for (let i = 0; i < 4; i++) assert.equal((await post(set.balancer!.url, `Q${i}?`)).status, 200);
    assert.equal(set.replicas[1]!.stats().completed, 4);
    await set.kill(1);
    const refused = await post(set.balancer!.url, 'Anyone?');
    assert.equal(refused.status, 502);
    assert.match(((await refused.json()) as { error: { message: string } }).error.message, /no replica answered/);
  } finally {
    await set.close();
  }
});

test('with GPUs, a request whose image is encoded and prefix cached already takes less GPU time than the first', async () => {
  const set = await startReplicas(1, { seed: 1, promptCache: PROMPT_CACHE_PRESETS.vllm, imageTokens: 1024, gpus: new GpuFleet({ requestsPerSecond: 1000, slots: 10 }, 1) });
  const replica = set.replicas[0]!;
  try {
    assert.equal((await post(replica.url, 'What is in the picture?', 'img-2')).status, 200);
    const cold = replica.stats().gpus!.busyMs;
    assert.equal((await post(replica.url, 'What colour is it?', 'img-2')).status, 200);
    const warm = replica.stats().gpus!.busyMs - cold;
    assert.ok(warm < cold / 2, `warm ${warm.toFixed(2)} ms vs cold ${cold.toFixed(2)} ms of GPU time`);
  } finally {
    await set.close();
  }
});

test('a build’s stages send every request of a sample with byte-identical image bytes and one id: each image is encoded once', async () => {
  const output = await mkdtemp(path.join(tmpdir(), 'mmif-image-ids-'));
  const set = await startReplicas(1, { seed: 3 });
  const sim = set.replicas[0]!;
  try {
    const config = parseBuildConfig({
      buildId: 'image-ids',
      output,
      sources: [{ type: 'cc3m', uri: SAMPLES_DIR, layout: 'files' }],
      maxSamples: 4,
      models: { default: { model: 'mmif-sim-vlm', baseUrl: sim.url } },
    });
    const ctx = contextFor(config);
    let samples: SourceSample[] = [];
    for await (const segment of ctx.sources[0]!.segments()) {
      samples = Array.from({ length: 4 }, (_, i) => segment.sample(i));
      break;
    }
    for (const stage of stageDefinitions(config.mode)) await runStage(ctx, stage.name, samples);
    const { vision, completed } = sim.stats();
    assert.equal(vision.idConflicts, 0, 'no id was sent with other bytes');
    assert.equal(vision.withId, vision.encodings + vision.hits, 'every image part carried its id');
    assert.ok(vision.encodings >= 1 && vision.encodings <= samples.length, `${vision.encodings} encodings for ${samples.length} images`);
    assert.ok(vision.hits >= 3 * vision.encodings, `each image reused by the sample's later requests (${vision.hits} hits, ${completed} replies)`);
  } finally {
    await set.close();
    await rm(output, { recursive: true, force: true });
  }
});
