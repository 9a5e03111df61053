/**
 * The simulator as N GPUs of a published profile (simulator/gpuProfile.ts): latency from a reply's
 * output length, the fleet's capacity and cap, and the SIM_GPU_* variables (over HTTP:
 * test/integration/gpuProfile.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GPU_PROFILES, GpuFleet, gpuFleetFromEnv } from '../../simulator/gpuProfile.js';
import { simulatorOptionsFromEnv } from '../../simulator/server.js';

test('a reply of the mean length takes slots / requests-per-second; longer replies proportionally longer; capacity is GPUs x the profile', () => {
  const fleet = new GpuFleet(GPU_PROFILES['qwen2.5-vl-7b'], 8, 2);
  assert.equal(fleet.maxConcurrent, 8 * 256);
  assert.equal(Math.round(fleet.requestsPerSecond * 100) / 100, 137.44, '8 GPUs x 8.59 requests/s x speedup 2');
  const meanMs = (1000 * 256) / 8.59 / 2;
  assert.equal(Math.round(fleet.latencyMs(100)), Math.round(meanMs), 'the first reply is the mean');
  assert.equal(Math.round(fleet.latencyMs(300)), Math.round((meanMs * 300) / 200), 'the mean is now 200 tokens');
  assert.ok(fleet.latencyMs(10) < fleet.latencyMs(1000));
});

test('the slot time given out is summed: it bounds the wall time the replies need', () => {
  const fleet = new GpuFleet({ requestsPerSecond: 2, slots: 4 }, 1);
  const first = fleet.latencyMs(50);
  const second = fleet.latencyMs(150);
  assert.equal(first, 2000, 'the mean reply takes slots / requests-per-second');
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
