/**
 * Endpoint limits across workers, from what the deployment already has (no coordination service):
 * - Per-minute rates: Temporal knows which worker processes poll a task queue (DescribeTaskQueue
 *   lists each poller's identity and last access), so every worker counts the live ones and admits
 *   1/N of each endpoint's requests and tokens per minute (llm/limiter.ts shareEndpointsAmong).
 * - Concurrency: split by demand, not by head count. Every worker reports its requests in flight and
 *   waiting per endpoint to the task queue's lease workflow (workflows/endpointLeases.ts, an update
 *   every REPORT_MS while busy, sooner when its demand crosses its grant) and admits what it is granted (llm/concurrencyLeases.ts): a worker
 *   whose activities are between model calls lends its part to the busy ones. When the lease
 *   workflow does not answer for LEASE_TTL_MS, the 1/N split applies until it answers again.
 * N workers then hold an endpoint at its configured concurrency or per-minute rates together, with
 * no hand-split cap.
 *
 * Liveness: a worker long-polls its workflow queue (about a minute per poll) even while all its
 * activity slots are busy, so a live worker's last access is never older than one poll; a worker
 * that died drops out of the count LIVE_MS after its last poll, and its leases return SILENT_MS
 * after its last report (until then the others keep its share unused: under the limit, never over).
 */
import { hostname } from 'node:os';
import { Client, WithStartWorkflowOperation } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import type { DemandReport, EndpointDemand } from '../llm/concurrencyLeases.js';
import { applyLeases, dropLeases, endpointDemands, leaseConcurrency, shareEndpointsAmong } from '../llm/limiter.js';
import { endpointLeases, endpointLeasesWorkflowId, reportDemandUpdate } from '../workflows/endpointLeases.js';

/** temporal.api.enums.v1.TaskQueueType (the proto package is not a direct dependency). */
const TASK_QUEUE_TYPES = { workflow: 1, activity: 2 } as const;

/** Longer than one long poll (the server holds a poll ~60-70 s), so a live idle worker still counts. */
export const LIVE_MS = 80_000;
export const RECOUNT_MS = 5_000;

type WorkflowService = NativeConnection['workflowService'];

/** Distinct identities that polled the task queue (workflow or activity tasks) within LIVE_MS of `now`. */
export async function livePollers(service: WorkflowService, namespace: string, taskQueue: string, now = Date.now()): Promise<Set<string>> {
  const live = new Set<string>();
  for (const taskQueueType of Object.values(TASK_QUEUE_TYPES)) {
    const { pollers } = await service.describeTaskQueue({ namespace, taskQueue: { name: taskQueue }, taskQueueType });
    for (const poller of pollers ?? []) {
      const at = poller.lastAccessTime;
      const ms = at ? Number(at.seconds ?? 0) * 1000 + Math.floor((at.nanos ?? 0) / 1e6) : 0;
      if (poller.identity && now - ms <= LIVE_MS) live.add(poller.identity);
    }
  }
  return live;
}

/**
 * Shares this process's endpoint limits with the other workers of `taskQueue` while the worker runs:
 * recounts the live workers every RECOUNT_MS for the per-minute rates (never fewer than 1: this
 * worker itself may not have polled yet; a failed count keeps the last one) and leases the
 * concurrency (leaseEndpointConcurrency). Stops once `finished()` says the worker has stopped; its
 * timers never keep the process alive.
 */
export function shareEndpointLimits(connection: NativeConnection, namespace: string, taskQueue: string, finished: () => boolean): void {
  leaseEndpointConcurrency(new Client({ connection, namespace }), taskQueue, `${process.pid}@${hostname()}`, finished);
  const loop = async (): Promise<void> => {
    if (finished()) return;
    try {
      shareEndpointsAmong(Math.max(1, (await livePollers(connection.workflowService, namespace, taskQueue)).size));
    } catch {
      // The server is unreachable or restarting: the worker notices that itself; keep the last share.
    }
    setTimeout(() => void loop(), RECOUNT_MS).unref();
  };
  void loop();
}

/**
 * A busy worker reports at least this often (a report is an update: ~6 ms of CPU on the server and
 * as much on the workers): the fair shares follow the workers' demands within two reports.
 */
export const REPORT_MS = 500;
/** How often a worker owed capacity by others asks again, to pick it up as they give it back. */
export const OWED_REPORT_MS = 150;
/** Local checks for a change worth reporting at once: requests waiting beyond the grant, or a grant much above the demand. */
const CHECK_MS = 50;
/** A worker with nothing in flight or waiting this long gives its leases back and stops reporting. */
export const IDLE_RELEASE_MS = 5_000;
/** Unanswered this long, a worker admits the 1/N split instead (well within the workflow's SILENT_MS). */
export const LEASE_TTL_MS = 5_000;
const REPORT_DEADLINE_MS = 2_000;

let reportsSent = 0;
/** Lease reports this process has sent, for diagnostics (bench/benchWorker.ts traces it). */
export const leaseReportsSent = (): number => reportsSent;

/** What makes a report urgent: requests waiting at the grant (wants more), or a grant well above the demand (can give back). */
function pressure(d: EndpointDemand): 'wants' | 'spares' | 'even' {
  if (d.queued > 0 && d.inFlight >= d.holding) return 'wants';
  if (d.holding - d.inFlight - d.queued >= Math.max(2, d.holding / 4)) return 'spares';
  return 'even';
}

/**
 * Leases this process's endpoint concurrency from the lease workflow of `taskQueue` (started by the
 * first report). Reports every REPORT_MS while any endpoint has requests in flight or waiting, every
 * OWED_REPORT_MS while owed capacity, and at once when an endpoint starts wanting more or sparing
 * some; gives the leases back after IDLE_RELEASE_MS idle and when the worker stops.
 */
export function leaseEndpointConcurrency(client: Client, taskQueue: string, worker: string, finished: () => boolean): void {
  const report = (demand: DemandReport) => {
    reportsSent++;
    return client.withDeadline(Date.now() + REPORT_DEADLINE_MS, () =>
      client.workflow.executeUpdateWithStart(reportDemandUpdate, {
        args: [demand],
        startWorkflowOperation: new WithStartWorkflowOperation(endpointLeases, {
          workflowId: endpointLeasesWorkflowId(taskQueue),
          taskQueue,
          workflowIdConflictPolicy: 'USE_EXISTING',
          args: [{}],
        }),
      }),
    );
  };
  let holding = false;
  let lastBusy = 0;
  let lastReport = 0;
  let owed = false;
  let reported = new Map<string, ReturnType<typeof pressure>>();
  let unansweredSince: number | undefined;
  const tick = async (asked: boolean): Promise<void> => {
    const now = Date.now();
    const endpoints = endpointDemands();
    if (endpoints.some((e) => e.inFlight + e.queued > 0)) lastBusy = now;
    if (finished() || now - lastBusy > IDLE_RELEASE_MS) {
      if (!holding) return;
      dropLeases();
      holding = false;
      reported = new Map();
      await report({ worker, endpoints: [], release: true }).catch(() => {}); // unheard: the workflow forgets a silent worker
      return;
    }
    const changed = endpoints.some((e) => pressure(e) !== 'even' && pressure(e) !== reported.get(e.endpoint));
    if (!asked && !changed && now - lastReport < (owed ? OWED_REPORT_MS : REPORT_MS)) return;
    lastReport = now;
    reported = new Map(endpoints.map((e) => [e.endpoint, pressure(e)]));
    try {
      const answer = await report({ worker, endpoints });
      applyLeases(answer.grants);
      owed = answer.owed;
      holding = true;
      unansweredSince = undefined;
    } catch {
      unansweredSince ??= now;
      if (Date.now() - unansweredSince > LEASE_TTL_MS) applyLeases(undefined);
    }
  };
  let running: Promise<void> | undefined;
  let askedAgain = false;
  const run = (asked: boolean): void => {
    if (running) {
      askedAgain ||= asked;
      return;
    }
    running = tick(asked).finally(() => {
      running = undefined;
      if (askedAgain) {
        askedAgain = false;
        run(true);
      }
    });
  };
  leaseConcurrency(() => setImmediate(() => run(true)));
  const loop = (): void => {
    run(false);
    if (finished()) {
      void running?.finally(() => leaseConcurrency(undefined));
      return;
    }
    setTimeout(loop, CHECK_MS).unref();
  };
  loop();
}
