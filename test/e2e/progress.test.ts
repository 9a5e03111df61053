/**
 * Progress while a build runs, on a real Temporal dev server with the HTTP simulator slowed down:
 * `mmif status` counts samples as their stages finish, before any shard commits, with the requests
 * per second against the endpoint's configured limit and the failed attempts by kind; after the
 * build is stopped and `mmif resume` starts it again, the rate and ETA come from the resumed run's
 * samples alone.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { BuildConfigInput } from '../../config/buildConfig.js';
import type { LiveProgress } from '../../cli/liveProgress.js';
import type { SampleRate } from '../../cli/progressView.js';
import type { ShardManifest } from '../../output/contracts/manifest.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { getJson } from '../../storage/objectStore.js';
import type { BuildProgress } from '../../workflows/buildProgress.js';
import { LocalStore } from '../../storage/localStore.js';
import { writeCc3m } from '../fixtures/cc3m.js';
import { eventually } from '../harness/datasetChecks.js';
import { mmif } from '../harness/mmifCli.js';
import { startStack, type Stack } from '../harness/stack.js';

let stack: Stack;
let dir: string;

before(async () => {
  stack = await startStack({ simulator: { seed: 9 }, taskQueue: 'mmif-progress' });
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-progress-'));
  await writeCc3m(new LocalStore(path.join(dir, 'cc3m')), 'webdataset', { perShard: 24, shards: 1 });
});

after(async () => {
  stack?.simulator.setFaults({ latencyMs: 0 });
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const config = (buildId: string): BuildConfigInput => ({
  buildId,
  seed: 2,
  output: path.join(dir, 'out'),
  sources: [{ type: 'cc3m', uri: path.join(dir, 'cc3m'), layout: 'webdataset' }],
  maxSamples: 24,
  shardSize: 8,
  sliceSize: 2,
  maxParallelShards: 1,
  // 600 a minute: 10 requests/s, the limit whose share `mmif status` shows.
  models: { default: { model: 'mmif-sim-vlm', requestsPerMinute: 600 } },
  // The first test's 500s are for the shards' requests to meet, not the pre-flight's.
  llm: { preflight: false },
});

test('mmif status counts samples through each stage before the first shard commits, with requests/s against the limit and failed attempts', async () => {
  // One request in five answered 500: retried (llm.retry), each failed attempt counted as transient.
  stack.simulator.setFaults({ latencyMs: 150, rate500: 0.2 });
  const handle = await stack.client.workflow.start('buildDataset', { taskQueue: stack.taskQueue, workflowId: 'progress-live', args: [config('progress-live')] });
  let screen = '';
  await eventually(
    async () => {
      screen = (await mmif(stack, 'status', 'progress-live')).stdout;
      const live = /^running shards, samples through each stage: image (\d+), instruction (\d+)/m.exec(screen);
      return /0\/3 shards/.test(screen) && live !== null && Number(live[2]) > 0 && /failed attempts: transient \d+/.test(screen);
    },
    90_000,
    'samples through the instruction stage of a running shard and a failed attempt, no shard committed yet',
  );
  assert.match(screen, /^requests: \d+\.\d\/s \(\d+% of the endpoints' limit, 10\.0\/s\) \| failed attempts: transient \d+$/m);
  const json = JSON.parse((await mmif(stack, 'status', 'progress-live', '--json')).stdout) as BuildProgress & { shardsLive: Array<{ requests: number }> };
  assert.equal(json.shards.planned, 3, "the JSON carries the build's progress...");
  assert.ok(json.shardsLive.length === 1 && json.shardsLive[0]!.requests > 0, "...and the running shard's, with the requests it sent");
  stack.simulator.setFaults({ latencyMs: 0, rate500: 0 });
  // Seen what the test is about: the rest of the build (24 samples through 500s and back-offs) proves nothing here.
  await handle.terminate('seen enough');
  await shardsClosed('progress-live');
});

/**
 * Waits until every shard a terminated build started has closed with it (the parent's close policy):
 * nothing of it is left for the next test's worker. A shard never started counts as closed.
 */
const shardsClosed = (buildId: string) =>
  eventually(
    async () => {
      for (let shard = 0; shard < 3; shard++) {
        const status = await stack.client.workflow
          .getHandle(`${buildId}/shard-${shard}`)
          .describe()
          .then(
            (d) => d.status.name,
            (err: unknown) => (err instanceof WorkflowNotFoundError ? 'NOT_STARTED' : Promise.reject(err)),
          );
        if (status === 'RUNNING') return false;
      }
      return true;
    },
    30_000,
    `the shards of ${buildId} closed`,
  );

test('a build whose shards take minutes: the header counts samples, rate, ETA and cost before the first commit, out of the planned samples, with a true request rate and failed attempts that never go down', async () => {
  // Each request takes 1.5 s and two samples are in flight at once: a sample's dozen calls take about
  // 20 s, a shard of 8 over a minute, and its samples end one after another, long before it commits.
  stack.simulator.setFaults({ latencyMs: 1_500, rate500: 0.1 });
  // Its own output and seed: no model call is a cache hit of the builds before it.
  const slow = {
    ...config('progress-slow'),
    seed: 3,
    output: path.join(dir, 'out-slow'),
    models: { default: { model: 'mmif-sim-vlm', requestsPerMinute: 600, concurrency: 2 } },
  };
  const handle = await stack.client.workflow.start('buildDataset', { taskQueue: stack.taskQueue, workflowId: 'progress-slow', args: [slow] });
  const failedSeen: number[] = [];
  let screen = '';
  try {
    await eventually(
      async () => {
        screen = (await mmif(stack, 'status', 'progress-slow')).stdout;
        const failed = /failed attempts: transient (\d+)/.exec(screen);
        if (failed) failedSeen.push(Number(failed[1]));
        const header = /^samples: (\d+) accepted, (\d+) rejected of 24 planned, \d+ DPO pairs committed \| (\d+\.\d) samples\/min \| ETA \S+$/m.exec(screen);
        return /^\[\.+\] 0\/3 shards/m.test(screen) && header !== null && Number(header[1]) + Number(header[2]) > 0;
      },
      240_000,
      'samples done in the header, with a rate and an ETA, before any shard commits',
    ).catch((err: unknown) => {
      throw new Error(`${(err as Error).message}; the last screen:\n${screen}`);
    });
    // The requests are sent at most at the endpoint's 10/s (its limiter), and at 4 s a reply far fewer: the share is a true one.
    const share = /^requests: (\d+\.\d)\/s \((\d+)% of the endpoints' limit, 10\.0\/s\)/m.exec(screen);
    assert.ok(share && Number(share[2]) <= 100, screen);
    // The cost so far: what the build paid, read from its spend ledger, no shard committed.
    assert.match(
      screen,
      /^ {2}(paid \$\d+\.\d{4} for [1-9]\d* requests|all [1-9]\d* requests would cost \$\d+\.\d{4}) \(all runs, committed or not\), \$0\.0000 of it in committed shards/m,
    );
    for (let i = 1; i < failedSeen.length; i++) assert.ok(failedSeen[i]! >= failedSeen[i - 1]!, `failed attempts went down: ${failedSeen.join(' -> ')}`);
  } finally {
    stack.simulator.setFaults({ latencyMs: 0, rate500: 0 });
    await handle.terminate('seen enough').catch(() => {}); // it may have completed
    await shardsClosed('progress-slow');
  }
});

test('an endpoint that is down: its refused connections are failed attempts in `mmif status` while Temporal retries the slice', async () => {
  // Nothing listens on port 9 (discard): every attempt is a refused connection, and no slice ever returns an outcome.
  const down = { ...config('progress-down'), models: { default: { model: 'mmif-sim-vlm', baseUrl: 'http://127.0.0.1:9/v1' } } };
  const handle = await stack.client.workflow.start('buildDataset', { taskQueue: stack.taskQueue, workflowId: 'progress-down', args: [down] });
  let screen = '';
  await eventually(
    async () => {
      screen = (await mmif(stack, 'status', 'progress-down')).stdout;
      // Once Temporal retries the slice, the cause of its last failed attempt comes with the count.
      return /failed attempts: transient [2-9]\d* \(last: /.test(screen);
    },
    150_000,
    'the refused connections counted, with their cause, while the slice is retried',
  );
  assert.match(screen, /^running shards, samples through each stage: image \d+, instruction 0/m);
  assert.match(
    screen,
    /^requests: \d+\.\d\/s .*\| failed attempts: transient \d+ \(last: instruction: model endpoint http:\/\/127\.0\.0\.1:9\/v1 \(model mmif-sim-vlm\): cannot connect: connect ECONNREFUSED 127\.0\.0\.1:9, \d+ attempts\)$/m,
  );
  await handle.terminate('the endpoint stays down');
  await shardsClosed('progress-down');
});

test("after a resume the rate and ETA come from the resumed run's samples alone, in `mmif status --json` as on the screen", async () => {
  stack.simulator.setFaults({ latencyMs: 40 });
  // An output of its own: in the shared one, the earlier tests' builds of the same samples and seed
  // left the model-call cache holding every reply, and the resumed run would finish before any status.
  const resumeConfig = { ...config('progress-resume'), output: path.join(dir, 'out-resume') };
  const handle = await stack.client.workflow.start('buildDataset', { taskQueue: stack.taskQueue, workflowId: 'progress-resume', args: [resumeConfig] });
  await eventually(async () => (await handle.query<BuildProgress>('progress')).shards.committed >= 1, 90_000, 'a first committed shard');
  await handle.terminate('stopped to test resume');
  // The samples a resume finds done: every sample of each committed shard (no held-out split here).
  const layout = buildLayout('progress-resume');
  const store = new LocalStore(resumeConfig.output);
  let foundDone = 0;
  for (let shard = 0; shard < 3; shard++) if (await getJson<ShardManifest>(store, layout.manifest(shard))) foundDone += resumeConfig.shardSize!;
  assert.ok(foundDone > 0);
  const resumedAt = Date.now();
  const resumed = await mmif(stack, 'resume', 'progress-resume');
  assert.equal(resumed.code, 0, resumed.stderr);
  // The first status of the resumed run with a rate: the samples done since its shards started, over
  // the time since, read between two clock readings around the command (no bound on how long it takes).
  let seen: { p: LiveProgress & { rate: SampleRate }; before: number; after: number } | undefined;
  await eventually(
    async () => {
      const before = Date.now();
      const status = await mmif(stack, 'status', 'progress-resume', '--json');
      const after = Date.now();
      assert.equal(status.code, 0, status.stderr);
      const p = JSON.parse(status.stdout) as LiveProgress & { rate: SampleRate };
      if (p.phase === 'running' && p.rate.samplesPerMinute > 0 && p.runStart[0] < before) seen = { p, before, after };
      return seen !== undefined;
    },
    90_000,
    'a rate after the resume',
  );
  const { p, before, after } = seen!;
  assert.equal(p.runStart[1], foundDone, 'the rate starts after the samples found done');
  assert.ok(p.runStart[0] >= resumedAt, "the rate starts with the resumed run's shards, not the build's first start");
  const done = p.samples.instruct + p.samples.rejectedSamples + p.shardsLive.reduce((n, s) => n + s.accepted + s.rejected, 0);
  const perMinute = (until: number) => (done - foundDone) / ((until - p.runStart[0]) / 60_000);
  assert.ok(
    perMinute(after) <= p.rate.samplesPerMinute && p.rate.samplesPerMinute <= perMinute(before),
    `rate ${p.rate.samplesPerMinute}/min: ${done - foundDone} samples since the resumed run's shards started`,
  );
  assert.ok(p.rate.etaSeconds! > 0, `ETA ${p.rate.etaSeconds} s with ${p.samples.planned - done} samples left`);
  await stack.client.workflow.getHandle('progress-resume').terminate('seen enough');
  await shardsClosed('progress-resume');
  stack.simulator.setFaults({ latencyMs: 0 });
});
