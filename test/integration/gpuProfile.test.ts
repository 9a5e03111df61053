/**
 * The simulator as GPUs of a profile (simulator/gpuProfile.ts), over HTTP: once the GPUs' slots are
 * full, a request is answered 429. The fleet's arithmetic is tested in test/unit/gpuProfile.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GpuFleet } from '../../simulator/gpuProfile.js';
import { startSimulator } from '../../simulator/server.js';

test("over HTTP: requests beyond the GPUs' slots are answered 429", async () => {
  // One GPU of 2 slots completing 1 request/s when full: a reply takes ~2 s, so three sent at once overlap.
  const sim = await startSimulator({ gpus: new GpuFleet({ requestsPerSecond: 1, slots: 2 }, 1) });
  try {
    const post = (i: number) =>
      fetch(`${sim.url}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sim' },
        body: JSON.stringify({ model: 'mmif-sim-vlm', messages: [{ role: 'user', content: `Describe scene ${i}.` }] }),
      });
    const responses = await Promise.all([0, 1, 2].map(post));
    assert.deepEqual(responses.map((r) => r.status).sort(), [200, 200, 429]);
    const refused = responses.find((r) => r.status === 429)!;
    assert.match(((await refused.json()) as { error: { message: string } }).error.message, /Simulated GPUs full: 2 requests in flight/);
    assert.equal(sim.stats().completed, 2);
  } finally {
    await sim.close();
  }
});
