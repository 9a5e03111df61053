/**
 * The simulator as N GPUs of a published profile (simulator/gpuProfile.ts): latency from a request's
 * GPU work (cached prefix and encoded image cheaper), the fleet's capacity and cap, and the SIM_GPU_* variables (over HTTP:
 * test/integration/gpuProfile.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CACHED_TOKEN_WORK, ENCODER_WORK_PER_IMAGE_TOKEN, GPU_PROFILES, GpuFleet, gpuFleetFromEnv, workOf, type RequestWork } from '../../simulator/gpuProfile.js';

/** A request with nothing cached: `output` output tokens after a 100-token prompt of which 60 are the image's. */
const cold = (output: number): RequestWork => ({ promptTokens: 100, cachedTokens: 0, imageTokens: 60, encoded: true, outputTokens: output });
import { simulatorOptionsFromEnv } from '../../simulator/server.js';

test('a request of the mean cold work takes slots / requests-per-second; more work proportionally longer; capacity is GPUs x the profile', () => {
  const fleet = new GpuFleet(GPU_PROFILES['qwen2.5-vl-7b'], 8, 2);
  assert.equal(fleet.maxConcurrent, 8 * 256);
  assert.equal(Math.round(fleet.requestsPerSecond * 100) / 100, 137.44, '8 GPUs x 8.59 requests/s x speedup 2');
  const meanMs = (1000 * 256) / 8.59 / 2;
  assert.equal(Math.round(fleet.latencyMs(cold(100))), Math.round(meanMs), 'the first request is the mean');
  const [w1, w2] = [workOf(cold(100)), workOf(cold(300))];
  assert.equal(Math.round(fleet.latencyMs(cold(300))), Math.round((meanMs * w2) / ((w1 + w2) / 2)), 'against the running mean of the cold work');
  assert.ok(fleet.latencyMs(cold(10)) < fleet.latencyMs(cold(1000)));
});

test('a cached prefix and an image already encoded cost less: the work each saves, by the published weights', () => {
  assert.equal(workOf(cold(40)), 100 + ENCODER_WORK_PER_IMAGE_TOKEN * 60 + 40);
  const warm = { ...cold(40), cachedTokens: 80, encoded: false };
  assert.equal(workOf(warm), 20 + CACHED_TOKEN_WORK * 80 + 40);
  const fleet = new GpuFleet({ requestsPerSecond: 2, slots: 4 }, 1);
  assert.equal(Math.round(fleet.latencyMs(cold(40))), 2000, 'cold: slots / requests-per-second');
  // Same cold work, so the mean stays; the warm request takes its work's share of it.
  assert.equal(Math.round(fleet.latencyMs(warm)), Math.round((2000 * workOf(warm)) / workOf(cold(40))));
  assert.ok(fleet.latencyMs(warm) < 0.5 * 2000, 'a warm image request takes under half the cold time here');
});

test('the slot time given out is summed: it bounds the wall time the replies need', () => {
  const fleet = new GpuFleet({ requestsPerSecond: 2, slots: 4 }, 1);
  const text = (output: number): RequestWork => ({ promptTokens: 0, cachedTokens: 0, imageTokens: 0, encoded: false, outputTokens: output });
  const first = fleet.latencyMs(text(50));
  const second = fleet.latencyMs(text(150));
  assert.equal(first, 2000, 'the mean request takes slots / requests-per-second');
  assert.equal(second, 3000, '150 tokens against a mean of 100');
  assert.equal(fleet.busyMs, 5000);
});

test('SIM_GPU_PROFILE, SIM_GPUS and SIM_GPU_SPEEDUP configure the fleet; a bad value is named', () => {
  assert.equal(gpuFleetFromEnv({}), undefined);
  const fleet = simulatorOptionsFromEnv({ SIM_GPU_PROFILE: 'qwen2.5-vl-7b', SIM_GPUS: '4', SIM_GPU_SPEEDUP: '10' }).gpus!;
  assert.equal(fleet.maxConcurrent, 1024);
  assert.equal(Math.round(fleet.requestsPerSecond * 10) / 10, 343.6);
  assert.throws(() => gpuFleetFromEnv({ SIM_GPU_PROFILE: 'llama-70b' }), /SIM_GPU_PROFILE="llama-70b": known profiles are qwen2.5-vl-7b/);
  assert.throws(() => gpuFleetFromEnv({ SIM_GPU_PROFILE: 'qwen2.5-vl-7b', SIM_GPUS: '1.5' }), /SIM_GPUS="1.5": expected a whole number of GPUs/);
  assert.throws(() => gpuFleetFromEnv({ SIM_GPU_PROFILE: 'qwen2.5-vl-7b', SIM_GPU_SPEEDUP: '-1' }), /SIM_GPU_SPEEDUP="-1": expected a positive number/);
});
