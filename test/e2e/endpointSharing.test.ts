/**
 * Endpoint limits across workers: the live pollers a real Temporal dev server reports for a task
 * queue, the share of the per-minute rates every worker then admits, and the concurrency leased by
 * demand through the queue's lease workflow. Two workers with their own identities (as two
 * processes have: pid@host) poll one queue; each counts both and admits half of each endpoint's cap.
 * (One process may run only one worker per queue and task type, so here one polls workflow tasks
 * and the other activity tasks; the count covers both types.)
 */
import type { WorkerDeploymentVersion } from '@temporalio/common';
import { currentOnceSeen, versionedWorkerOptions, workerDeploymentVersion } from '../../worker/deploymentVersion.js';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { eventually } from '../harness/datasetChecks.js';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import * as activities from '../../activities/index.js';
import { LEASE_MS, rateDemand, type LeaseAnswer } from '../../llm/concurrencyLeases.js';
import { resolveEndpoint } from '../../llm/endpoint.js';
import { endpointDemands, limiterFor, shareEndpointsAmong } from '../../llm/limiter.js';
import { startTemporalDevServer, type DevServer } from '../../local/temporalDevServer.js';
import { startSimulator } from '../../simulator/server.js';
import { bundleWorkflows } from '../../worker/bundleProcess.js';
import { endpointLeases, endpointLeasesWorkflowId, MAX_HELD } from '../../workflows/endpointLeases.js';
import {
  jittered,
  LIVE_MS,
  leaseEndpointConcurrency,
  leasesReleased,
  livePollers,
  RECOUNT_MS,
  REPORT_DEADLINE_MS,
  reportDemand,
  RETRY_MS,
  shareEndpointLimits,
} from '../../worker/endpointSharing.js';

let server: DevServer;
let connection: NativeConnection;
let workflowBundle: Awaited<ReturnType<typeof bundleWorkflows>>;
let version: WorkerDeploymentVersion;
const workers: Worker[] = [];
const runs: Promise<void>[] = [];
const TASK_QUEUE = 'mmif-sharing';

before(async () => {
  server = await startTemporalDevServer();
  connection = await NativeConnection.connect({ address: server.address });
  workflowBundle = await bundleWorkflows();
  version = await workerDeploymentVersion(workflowBundle);
  // Both of one version: a pinned build's activities go to workers of its version.
  const common = { connection, namespace: 'default', taskQueue: TASK_QUEUE, ...versionedWorkerOptions(version) };
  workers.push(await Worker.create({ ...common, identity: 'worker-a@host', workflowBundle }));
  workers.push(await Worker.create({ ...common, identity: 'worker-b@host', activities }));
  currentOnceSeen(connection, 'default', version, workers[0]!);
  for (const worker of workers) runs.push(worker.run());
});

/** A desk's worker of its own, on `queue`, of the file's workers' version: running until `stop()`. */
async function startDesk(queue: string): Promise<{ stop(): Promise<void> }> {
  const desk = await Worker.create({ connection, namespace: 'default', taskQueue: queue, workflowBundle, ...versionedWorkerOptions(version) });
  const running = desk.run();
  return {
    stop: async () => {
      desk.shutdown();
      await running;
    },
  };
}

after(async () => {
  for (const worker of workers) worker.shutdown();
  await Promise.allSettled(runs);
  shareEndpointsAmong(1);
  await connection?.close();
  await server?.stop();
});

test('counts the workers polling a task queue, and only those seen within LIVE_MS', async () => {
  let live = new Set<string>();
  await eventually(async () => (live = await livePollers(connection.workflowService, 'default', TASK_QUEUE)).size >= 2, 60_000, 'both workers polling');
  assert.deepEqual([...live].sort(), ['worker-a@host', 'worker-b@host']);
  assert.deepEqual([...(await livePollers(connection.workflowService, 'default', 'mmif-no-such-queue'))], []);
  const later = await livePollers(connection.workflowService, 'default', TASK_QUEUE, Date.now() + LIVE_MS + 120_000);
  assert.equal(later.size, 0, 'a worker that stopped polling drops out of the count');
});

test('each worker counts the live workers; where it holds no lease of the per-minute rates, it admits half of them', async () => {
  const endpoint = resolveEndpoint({ model: 'sharing-model', baseUrl: 'http://127.0.0.1:9', apiKeyEnv: 'MMIF_TEST_UNSET_KEY', concurrency: 64, batch: false });
  const limiter = limiterFor(endpoint, { concurrency: 64, requestsPerMinute: 1_200 });
  assert.equal(limiter.snapshot().workers, 1);
  let stopped = false;
  shareEndpointLimits(connection, 'default', TASK_QUEUE, () => stopped);
  await eventually(() => limiter.snapshot().workers === 2, 60_000, 'the limiter counting both workers');
  const pick = ({ workers, requestsPerMinute, leased }: ReturnType<typeof limiter.snapshot>) => ({ workers, requestsPerMinute, leased });
  assert.deepEqual(pick(limiter.snapshot()), { workers: 2, requestsPerMinute: 0, leased: true }, 'leasing: nothing before a request asks for a lease');
  stopped = true;
  // Its lease loop sees the stop before the next test leases anew.
  await eventually(() => !limiter.snapshot().leased, 60_000, 'the lease loop stopped');
  assert.deepEqual(pick(limiter.snapshot()), { workers: 2, requestsPerMinute: 600, leased: false }, 'not leasing: the 1/2 split');
});

/**
 * Concurrency by demand, through the task queue's lease workflow on the real server: this process
 * (its limiter and its lease reports, as `mmif worker` runs them) and a peer worker reporting
 * directly. While the peer is idle this process borrows its part (more than the 1/2 split); when the
 * peer gets busy, this process gives it back as its requests end, until they hold half each; at no
 * moment do the two hold more than the cap together.
 */
test('concurrency is leased by demand: an idle worker lends its part, takes it back when busy, never over the cap together', async () => {
  const CAP = 64;
  const limits = { concurrency: CAP };
  const endpoint = resolveEndpoint({ model: 'leased-model', baseUrl: 'http://127.0.0.1:9', apiKeyEnv: 'MMIF_TEST_UNSET_KEY', concurrency: CAP, batch: false });
  const limiter = limiterFor(endpoint, limits);
  const client = new Client({ connection });
  let stopped = false;
  leaseEndpointConcurrency(client, TASK_QUEUE, 'this-worker@host', () => stopped);
  const peer = { grant: 0, demand: 0 };
  const endpointId = () => endpointDemands()[endpointDemands().length - 1]!.endpoint;
  // The peer reports as a worker does: one report out at a time, answered when its grant changes
  // (or after HOLD_MS); it reports once more after it gets busy.
  let seq = 0;
  const peerReport = async (): Promise<void> => {
    const inFlight = Math.min(peer.demand, peer.grant);
    const answer = await reportDemand(client, TASK_QUEUE, {
      worker: 'peer@host',
      seq: ++seq,
      endpoints: [{ endpoint: endpointId(), cap: CAP, inFlight, queued: peer.demand - inFlight, holding: peer.grant }],
    });
    if (!answer.superseded) peer.grant = answer.grants[endpointId()]!;
  };
  const peerReports = (async () => {
    while (!stopped) await peerReport();
  })();
  const releases: Array<() => void> = [];
  const calls = Array.from({ length: 1000 }, () => limiter.run(1, () => new Promise<void>((done) => releases.push(done)), undefined, limits));
  let worst = 0;
  const watch = setInterval(() => (worst = Math.max(worst, limiter.snapshot().inFlight + Math.min(peer.demand, peer.grant))), 10);
  try {
    const until = async (what: string, done: () => boolean) => {
      await eventually(done, 60_000, what).catch(() => undefined);
      assert.ok(done(), `${what}: this worker ${JSON.stringify(limiter.snapshot())}, peer ${JSON.stringify(peer)}`);
    };
    await until('the idle peer lends its part', () => limiter.snapshot().inFlight === CAP);
    peer.demand = 100;
    void peerReport(); // supersedes the report waiting for an answer
    // This worker's requests end one by one; only then can the peer have their slots.
    const ending = setInterval(() => releases.shift()?.(), 20);
    try {
      await until('half each', () => peer.grant === CAP / 2 && limiter.snapshot().concurrency === CAP / 2 && limiter.snapshot().inFlight === CAP / 2);
    } finally {
      clearInterval(ending);
    }
    assert.ok(worst <= CAP, `${worst} in flight together, over the cap of ${CAP}`);
  } finally {
    clearInterval(watch);
    stopped = true;
    await peerReports;
    while (releases.length > 0 || limiter.snapshot().inFlight + limiter.snapshot().queued > 0) (releases.shift()?.(), await sleep(1));
    await Promise.allSettled(calls);
  }
});

test('a stopping worker hands its lease back before it exits: a busy peer gets the whole cap at once, not after the lease term', async () => {
  const CAP = 32;
  const limits = { concurrency: CAP };
  const endpoint = resolveEndpoint({ model: 'released-model', baseUrl: 'http://127.0.0.1:9', apiKeyEnv: 'MMIF_TEST_UNSET_KEY', concurrency: CAP, batch: false });
  const limiter = limiterFor(endpoint, limits);
  const client = new Client({ connection });
  // The stopping worker's own connection, closed when it exits as `mmif worker`'s is.
  const own = await Connection.connect({ address: server.address });
  let stopped = false;
  leaseEndpointConcurrency(new Client({ connection: own }), TASK_QUEUE, 'stopping-worker@host', () => stopped);
  const endpointId = endpointDemands()[endpointDemands().length - 1]!.endpoint;
  const releases: Array<() => void> = [];
  const calls = Array.from({ length: CAP }, () => limiter.run(1, () => new Promise<void>((done) => releases.push(done)), undefined, limits));
  const waitFor = (what: string, done: () => boolean | Promise<boolean>) => eventually(done, 60_000, what);
  await waitFor('this worker leases the whole cap while the peer is idle', () => limiter.snapshot().inFlight === CAP);
  // The worker stops as `mmif worker` does on SIGTERM: its requests end, then it awaits the release.
  while (releases.length > 0) releases.shift()!();
  await Promise.allSettled(calls);
  stopped = true;
  await leasesReleased();
  await own.close();
  // A peer that wants everything: the desk gives it the whole cap only once it heard the release;
  // unheard, it would honour the stopped worker's lease for its term (LEASE_MS) plus drain.
  let seq = 0;
  const peerGrant = async () => {
    const answer = await reportDemand(client, TASK_QUEUE, {
      worker: 'busy-peer@host',
      seq: ++seq,
      endpoints: [{ endpoint: endpointId, cap: CAP, inFlight: 0, queued: CAP, holding: 0 }],
    });
    return answer.superseded ? 0 : answer.grants[endpointId]!;
  };
  // Heard: the first report after the release gets the whole cap, where an unheard release leaves it 0 for LEASE_MS.
  assert.equal(await peerGrant(), CAP, 'the whole cap on the first report after the release');
});

/**
 * Per-minute rates by demand, through the same lease workflow: this process paces its requests at
 * its lease of a 1,200/min limit, a peer reports its rate directly. While the peer is idle this
 * process paces at all of the limit (more than the 1/2 split); when requests wait at the peer's rate
 * the two end at half each; at no moment do their paces sum to more than the limit.
 */
test('per-minute rates are leased by demand: an idle worker lends its part of the rate, takes it back when busy, never over the limit together', async () => {
  const LIMIT = 1_200;
  const limits = { concurrency: 64, requestsPerMinute: LIMIT };
  const endpoint = resolveEndpoint({ model: 'rate-leased-model', baseUrl: 'http://127.0.0.1:9', apiKeyEnv: 'MMIF_TEST_UNSET_KEY', concurrency: 64, batch: false });
  const limiter = limiterFor(endpoint, limits);
  const client = new Client({ connection });
  let stopped = false;
  leaseEndpointConcurrency(client, TASK_QUEUE, 'this-worker@host', () => stopped);
  const rateId = endpointDemands().at(-1)!.endpoint;
  assert.match(rateId, /\/rpm$/);
  const peer = { pace: 0, waiting: false };
  let seq = 0;
  const peerReport = async (): Promise<void> => {
    const answer = await reportDemand(client, TASK_QUEUE, {
      worker: 'rate-peer@host',
      seq: ++seq,
      endpoints: [rateDemand(rateId, { limit: LIMIT, used: 0, waiting: peer.waiting, holding: peer.pace })],
    });
    if (!answer.superseded) peer.pace = answer.grants[rateId]!;
  };
  const peerReports = (async () => {
    while (!stopped) await peerReport();
  })();
  const abort = new AbortController();
  const calls = Array.from({ length: 1000 }, () => limiter.run(1, async () => {}, undefined, limits, abort.signal).catch(() => {}));
  let worst = 0;
  const watch = setInterval(() => (worst = Math.max(worst, (limiter.snapshot().requestsPerMinute ?? 0) + peer.pace)), 10);
  try {
    const until = async (what: string, done: () => boolean) => {
      await eventually(done, 60_000, what).catch(() => undefined);
      assert.ok(done(), `${what}: this worker ${JSON.stringify(limiter.snapshot())}, peer ${JSON.stringify(peer)}`);
    };
    await until('the idle peer lends its part of the rate', () => limiter.snapshot().requestsPerMinute === LIMIT);
    peer.waiting = true;
    void peerReport(); // supersedes the report waiting for an answer
    await until('half each', () => peer.pace === LIMIT / 2 && limiter.snapshot().requestsPerMinute === LIMIT / 2);
    assert.ok(worst <= LIMIT, `paced at ${worst}/min together, over the limit of ${LIMIT}`);
  } finally {
    clearInterval(watch);
    stopped = true;
    abort.abort();
    await peerReports;
    await Promise.all(calls);
  }
});

/**
 * More workers than Temporal's in-flight update limit (history.maxInFlightUpdates, 10 by default):
 * 16 workers, all busy on one endpoint, reporting to one desk as worker/endpointSharing.ts does (one
 * report out whenever none waits out the desk's `again`, a refused one retried after RETRY_MS, both
 * jittered). The desk holds at most MAX_HELD (3) reports and answers the rest at once with `again`.
 * The reporters' client has no gRPC retries, so every refusal by the server is seen. They converge
 * to fair shares, never over the cap together; from then on, while each reports at least twice more,
 * the server refuses none. (Their first reports, sent at the same instant, may be: 16 updates arrive
 * before the desk's first workflow task.) A desk that held every report would keep 10 in flight and
 * have the other 6 refused at each try. The fleet has a desk of its own, on its own queue, with its
 * own worker: not the file's desk, which holds the earlier tests' workers and history (ADR 0069).
 */
test('more concurrent reporters than the in-flight update limit are all served, at fair shares within the cap', async () => {
  const CAP = 64;
  const WORKERS = 16;
  const QUEUE = 'mmif-fleet-desk';
  const desk = await startDesk(QUEUE);
  const bare = await Connection.connect({ address: server.address, interceptors: [] }); // a refusal is an error, not a retry
  const client = new Client({ connection: bare });
  const grants: Record<string, number> = {};
  const answered: Record<string, number> = {};
  const refusals: string[] = [];
  let unheld = 0;
  let stopped = false;
  const reporter = async (worker: string): Promise<void> => {
    let seq = 0;
    while (!stopped) {
      const holding = grants[worker] ?? 0;
      // Busy: it uses all it holds (requests above a lowered grant end at once) and 100 more wait.
      const report = { worker, seq: ++seq, endpoints: [{ endpoint: 'fleet-endpoint', cap: CAP, inFlight: holding, queued: 100, holding }] };
      const answer = await reportDemand(client, QUEUE, report).catch((error: Error) => {
        refusals.push(error.message);
        return undefined;
      });
      if (!answer) {
        await sleep(jittered(RETRY_MS));
        continue;
      }
      answered[worker] = (answered[worker] ?? 0) + 1;
      if (!answer.superseded) grants[worker] = answer.grants['fleet-endpoint']!;
      if (answer.again !== undefined) {
        unheld++;
        await sleep(jittered(answer.again));
      }
    }
  };
  let worst = 0;
  const watch = setInterval(
    () =>
      (worst = Math.max(
        worst,
        Object.values(grants).reduce((a, b) => a + b, 0),
      )),
    10,
  );
  const names = Array.from({ length: WORKERS }, (_, i) => `fleet-${i}@host`);
  const loops = names.map(reporter);
  const until = async (what: string, done: () => boolean) => {
    await eventually(done, 120_000, what).catch(() => undefined);
    assert.ok(done(), `${what}: grants ${JSON.stringify(grants)}, refusals ${JSON.stringify(refusals)}`);
  };
  try {
    await until('fair shares', () => names.every((w) => grants[w] === CAP / WORKERS));
    const refusedBefore = refusals.length;
    const answeredBefore = { ...answered };
    await until('two more answers each', () => names.every((w) => answered[w]! >= answeredBefore[w]! + 2));
    // A report landing on the desk while it continues as new is aborted (and sent again): not a refusal.
    const refused = refusals.slice(refusedBefore).filter((message) => !/workflow update was aborted/.test(message));
    assert.deepEqual(refused, [], 'the server refused no report once the fleet is steady');
    assert.deepEqual(
      names.map((w) => grants[w]),
      names.map(() => CAP / WORKERS),
      'still fair shares',
    );
    assert.ok(unheld > 0, 'some reports were answered without being held');
    assert.ok(worst <= CAP, `${worst} granted together, over the cap of ${CAP}`);
  } finally {
    clearInterval(watch);
    stopped = true;
    await Promise.all(loops);
    for (const worker of names) await reportDemand(client, QUEUE, { worker, seq: Number.MAX_SAFE_INTEGER, endpoints: [], release: true });
    await bare.close();
    await desk.stop();
  }
});

/**
 * The desk holds at most MAX_HELD answers (3). Three workers that hold their fair shares and want no
 * more are held; a fourth starts a busy spell, owed capacity they hold: it takes the place of one of
 * them (answered at once, told to report again later), and once a worker gives slots back they reach
 * it in the same workflow task, instead of at its next paced report.
 */
test('a worker owed capacity is held before one that is not, and capacity given back reaches it at once', async () => {
  const QUEUE = 'mmif-owed-first';
  const desk = await startDesk(QUEUE);
  const client = new Client({ connection });
  const term = Date.now() + 600_000;
  const holder = { cap: 6, demand: 2, holds: 2, grant: 2, until: term };
  // A desk whose book has x, y and z holding 2 each of a cap of 6, as their reports left it.
  const handle = await client.workflow.start(endpointLeases, {
    workflowId: endpointLeasesWorkflowId(QUEUE),
    taskQueue: QUEUE,
    args: [{ book: { e: { x: { ...holder }, y: { ...holder }, z: { ...holder } } }, newest: {} }],
  });
  const seqs: Record<string, number> = {};
  const answers: Record<string, LeaseAnswer> = {};
  const report = (worker: string, inFlight: number, queued: number, holding: number) =>
    reportDemand(client, QUEUE, {
      worker,
      seq: (seqs[worker] = (seqs[worker] ?? 0) + 1),
      endpoints: [{ endpoint: 'e', cap: 6, inFlight, queued, holding, drainMs: 1_000 }],
    }).then((answer) => (answers[worker] = answer));
  const heldNow = async () => {
    const { events } = await handle.fetchHistory();
    const count = (pick: (e: NonNullable<typeof events>[number]) => unknown) => (events ?? []).filter(pick).length;
    return count((e) => e.workflowExecutionUpdateAcceptedEventAttributes) - count((e) => e.workflowExecutionUpdateCompletedEventAttributes);
  };
  const until = async (what: string, done: () => boolean | Promise<boolean>) => {
    await eventually(done, 60_000, what).catch(() => undefined);
    assert.ok(await done(), `${what}: answers ${JSON.stringify(answers)}`);
  };
  try {
    for (const w of ['x', 'y', 'z']) void report(w, 2, 0, 2);
    await until('the three unchanged answers are held', async () => (await heldNow()) === MAX_HELD);
    assert.deepEqual(answers, {}, 'none answered yet');
    const owed = report('n', 0, 6, 0); // its fair share is 2 (1.5, and the remainder goes to the asker), all of it held by x, y and z
    await until('one of the three is answered to make room', () => Object.keys(answers).length === 1);
    const [evicted, answer] = Object.entries(answers)[0]!;
    // Answered to make room, not at the end of its hold: in the desk's history the first answer comes
    // before any hold timer (HOLD_MS) fires, whatever the wall time it took.
    const { events } = await handle.fetchHistory();
    const firstAnswer = (events ?? []).findIndex((e) => e.workflowExecutionUpdateCompletedEventAttributes);
    const firstTimerFired = (events ?? []).findIndex((e) => e.timerFiredEventAttributes);
    assert.ok(firstAnswer >= 0 && (firstTimerFired < 0 || firstAnswer < firstTimerFired), `first answer at event ${firstAnswer}, first hold timer fired at ${firstTimerFired}`);
    assert.equal(answer.grants.e, 2, 'its grant is unchanged');
    assert.ok(answer.again !== undefined && answer.again > 0, `told to report again later: ${JSON.stringify(answer)}`);
    assert.equal(answers.n, undefined, 'the owed report is held');
    assert.equal(await heldNow(), MAX_HELD);
    void report(evicted, 0, 0, 0); // its spell ends: it gives its 2 slots back
    const given = await owed;
    assert.deepEqual([given.grants.e, given.again], [2, undefined], "the slots given back reach the owed worker's held report");
  } finally {
    for (const w of ['x', 'y', 'z', 'n']) await reportDemand(client, QUEUE, { worker: w, seq: Number.MAX_SAFE_INTEGER, endpoints: [], release: true });
    await desk.stop();
  }
});

/**
 * Lease terms with the desk away: 4 processes that each run a worker's endpoint side
 * (bench/leaseFleet.ts --role reporter: its limiter, the lease reports `mmif worker` sends, and
 * requests to the simulator in busy spells of 5-15 s) share a cap of 16 at the simulator, which
 * answers 429 above it. The desk's worker stops for longer than a lease's term, then comes back.
 * While the desk is away the reports fail (past REPORT_DEADLINE_MS) but the fleet keeps its leases
 * and completes requests; past the term it admits nothing; once the desk is back it runs again. At
 * no moment does the simulator have more than 16 in flight, and it answers no 429.
 */
test('a desk away for longer than a lease term: the fleet keeps its leases through the term, then admits nothing, and never goes over the cap', async () => {
  const CAP = 16;
  const FLEET_QUEUE = 'mmif-lease-fleet'; // bench/leaseFleet.ts's reporters lease on it
  const sim = await startSimulator({ seed: 3, faults: { latencyMs: 200, maxConcurrent: CAP } });
  let desk = await startDesk(FLEET_QUEUE);
  const script = fileURLToPath(new URL('../../bench/leaseFleet.ts', import.meta.url));
  const reporters: Array<{ child: ChildProcess; out: () => string }> = [];
  let reports: Array<{ failed?: Record<string, number>; termsEnded?: number }> = [];
  const until = async (what: string, done: () => boolean) => {
    await eventually(done, 120_000, what).catch(() => undefined);
    assert.ok(done(), `${what}: simulator ${JSON.stringify(sim.stats().byStatus)}, ${sim.stats().inFlight} in flight`);
  };
  try {
    for (let i = 0; i < 4; i++) {
      const child = spawn(process.execPath, ['--import', 'tsx', script, '--role', 'reporter', '--concurrency', String(CAP)], {
        env: { ...process.env, TEMPORAL_ADDRESS: server.address, OPENAI_BASE_URL: sim.url, FLEET_WORKERS: '4' },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let out = '';
      child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      reporters.push({ child, out: () => out });
    }
    await until('the reporters start', () => reporters.every((r) => r.out().includes('reporter ready')));
    for (const { child } of reporters) child.kill('SIGUSR2'); // they start their requests together
    await until('the fleet runs on its leases', () => sim.stats().completed >= 300);

    await desk.stop();
    const away = Date.now();
    const before = sim.stats().completed;
    await until('requests complete while the desk is away, past a report deadline', () => Date.now() - away > REPORT_DEADLINE_MS + 2_000 && sim.stats().completed >= before + 300);
    await until('past the term, nothing is admitted', () => Date.now() - away > LEASE_MS && sim.stats().inFlight === 0);
    const idle = sim.stats().completed;

    desk = await startDesk(FLEET_QUEUE);
    await until('the desk is back: the fleet runs again', () => sim.stats().completed >= idle + 300);
  } finally {
    reports = await Promise.all(
      reporters.map(async ({ child, out }) => {
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        await exited;
        return JSON.parse(out().trim().split('\n').at(-1) ?? '{}') as { failed?: Record<string, number>; termsEnded?: number };
      }),
    );
    await desk.stop();
    await sim.close();
  }
  const stats = sim.stats();
  assert.equal(stats.byStatus['429'] ?? 0, 0, `the simulator refused requests over its cap: ${JSON.stringify(stats.byStatus)}`);
  assert.ok(stats.maxInFlight <= CAP, `${stats.maxInFlight} in flight at the simulator, over the cap of ${CAP}`);
  assert.ok(
    reports.some((r) => Object.values(r.failed ?? {}).some((n) => n > 0)),
    'reports failed while the desk was away',
  );
  assert.ok(
    reports.some((r) => (r.termsEnded ?? 0) > 0),
    'lease terms ended unanswered',
  );
});
