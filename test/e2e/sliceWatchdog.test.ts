/**
 * A slice that stands still is failed by its no-progress watchdog (activities/sliceWatchdog.ts), not
 * held for its start-to-close timeout behind a heartbeat that only proves the worker lives. The
 * simulator hangs every request; each attempt times out, and the calls' own retries would take far
 * longer than the watchdog's bound, so the build fails with the watchdog's one line naming the slice
 * and how long it made no progress, after its retryable attempts ran out.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BuildConfigInput } from '../../config/buildConfig.js';
import { LocalStore } from '../../storage/localStore.js';
import { noProgressBoundMs } from '../../activities/sliceWatchdog.js';
import { writeCc3m } from '../fixtures/cc3m.js';
import { failureLine } from '../harness/buildFailure.js';
import { startStack, type Stack } from '../harness/stack.js';

let stack: Stack;
let dir: string;

before(async () => {
  stack = await startStack({ simulator: { seed: 2, faults: { rateHang: 1, hangMs: 600_000 } }, taskQueue: 'mmif-watchdog' });
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-watchdog-'));
  await writeCc3m(new LocalStore(path.join(dir, 'cc3m')), 'files', { perShard: 2, shards: 1 });
});

after(async () => {
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

// A call gives up after 20 attempts of 2 s each (40 s and more); the watchdog's bound is 4 x 2.2 s.
const llm = { preflight: false, timeoutMs: 2_000, retry: { maxAttempts: 20, baseDelayMs: 100, maxDelayMs: 200 } };

const config: BuildConfigInput = {
  buildId: 'stalled',
  seed: 1,
  output: '',
  sources: [],
  maxSamples: 2,
  shardSize: 2,
  sliceSize: 2,
  retry: { maximumAttempts: 2, initialIntervalSeconds: 0.1, maximumIntervalSeconds: 0.1 },
  llm,
  models: { default: { model: 'mmif-sim-vlm' } },
};

test('a slice whose endpoint hangs fails, retryably, with one line naming it and how long it made no progress', async () => {
  const input = { ...config, output: path.join(dir, 'out'), sources: [{ type: 'cc3m', uri: path.join(dir, 'cc3m') }] };
  const err = await stack.client.workflow.execute('buildDataset', { taskQueue: stack.taskQueue, workflowId: 'stalled', args: [input] }).then(
    () => assert.fail('the build should fail'),
    (e: unknown) => e,
  );
  const line = failureLine(err);
  const bound = noProgressBoundMs({ timeoutMs: llm.timeoutMs, retry: { ...llm.retry } });
  const match =
    /^1 of 1 shards failed \(report: .*\): shard 0: slice 0-1 of shard 0 \(image, [a-z, ]+\) made no progress for (\d+\.\d) s \(no sample advanced a stage, no model reply came, no move in the lane line; the bound is 8\.8 s, 4 x \(llm\.timeoutMs \+ llm\.retry\.maxDelayMs\)\): its attempt failed, to be retried$/.exec(
      line,
    );
  assert.ok(match, line);
  assert.ok(Number(match[1]) * 1000 >= bound, `stood still ${match[1]} s, over the ${bound} ms bound`);

  // Retryable: the shard's slice activity ran a second attempt, which stalled too.
  const events = (await stack.client.workflow.getHandle('stalled/shard-0').fetchHistory()).events ?? [];
  const started = events.filter((e) => e.activityTaskStartedEventAttributes).map((e) => e.activityTaskStartedEventAttributes!.attempt);
  const failed = events.map((e) => e.activityTaskFailedEventAttributes?.failure?.applicationFailureInfo).find(Boolean);
  assert.deepEqual({ type: failed?.type, nonRetryable: Boolean(failed?.nonRetryable) }, { type: 'SliceMadeNoProgress', nonRetryable: false });
  assert.ok(started.includes(2), `attempts started: ${started.join(', ')}`);
  assert.ok(stack.simulator.stats().requests >= 2, 'requests were sent and hung');
});
