/**
 * Endpoint limits across workers, from what the deployment already has (no coordination service):
 * every worker reports its demand per endpoint to the task queue's lease desk
 * (workflows/endpointLeases.ts) and admits what it is granted, a lease with a term the desk honours
 * (docs/adr/0023-endpoint-limits-leased-by-demand.md): a worker whose reports are late keeps admitting
 * under its lease, and past its term unanswered admits nothing. A process that does not lease splits
 * the limits 1/N among the task queue's live pollers (DescribeTaskQueue; shareEndpointsAmong): a live
 * worker long-polls about once a minute even with every activity slot busy, so one silent LIVE_MS
 * after its last poll is gone, and its leases return once their term and drain have passed.
 */
import { hostname } from 'node:os';
import { Client, WithStartWorkflowOperation } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import { LEASE_MS, leaseEnds, type DemandReport, type EndpointDemand, type LeaseAnswer } from '../llm/concurrencyLeases.js';
import { applyLeases, dropLeases, endpointDemands, leaseConcurrency, lowerLeases, shareEndpointsAmong } from '../llm/limiter.js';
import { endpointLeases, endpointLeasesWorkflowId, HOLD_MS, reportDemandUpdate } from '../workflows/endpointLeases.js';
import { maskingDataConverter } from './maskingPayloadCodec.js';

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
  splitAmongPollers(connection, namespace, taskQueue, finished);
  leaseEndpointConcurrency(new Client({ connection, namespace, dataConverter: maskingDataConverter }), taskQueue, `${process.pid}@${hostname()}`, finished);
}

/** Shares the per-minute rates (and, where no lease applies, the concurrency) 1/N among the live workers of `taskQueue`. */
export function splitAmongPollers(connection: NativeConnection, namespace: string, taskQueue: string, finished: () => boolean): void {
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

/** Local checks for a change worth reporting at once: requests waiting at the grant, or a grant much above the demand. */
export const CHECK_MS = 50;
/** A worker with nothing in flight or waiting this long gives its leases back and stops reporting (a release is sent with nothing in flight). */
const IDLE_RELEASE_MS = 5_000;
/** After a failed report (one the server refused, or unanswered), the next one waits about this long. */
export const RETRY_MS = 500;

/**
 * A delay spread over 0.5-1.5x `ms`: workers that started together, or were answered by one workflow
 * task, would otherwise report again together, and a burst of more reports than Temporal admits in
 * flight at once is refused (workflows/endpointLeases.ts).
 */
export const jittered = (ms: number): number => ms * (0.5 + Math.random());
/**
 * A report unanswered this long is given up and sent anew (the newer one supersedes it at the desk;
 * an answer to the old one is not applied). Long, since a late answer still renews the lease (answers
 * after 8 s were measured on a saturated host), yet short enough for a second try within the term.
 */
export const REPORT_DEADLINE_MS = LEASE_MS / 2;

let reportsSent = 0;
let termsEnded = 0;
const reportFailures: Record<string, number> = {};
/** The times this process's lease term ended unanswered (it then admitted nothing until the next answer), for diagnostics (bench/leaseFleet.ts). */
export const leaseTermsEnded = (): number => termsEnded;
/** Lease reports this process has sent, for diagnostics (bench/benchWorker.ts traces it). */
export const leaseReportsSent = (): number => reportsSent;
/** Lease reports that failed (refused by the server, or unanswered by the deadline) by the start of their error message, for diagnostics (bench/leaseFleet.ts). */
export const leaseReportFailures = (): Readonly<Record<string, number>> => reportFailures;

/** Triggered reports go out at most this often (the one out is superseded: the workflow answers the newer). */
export const MIN_GAP_MS = 200;
/**
 * Unused slots are given back early (givingBack) once they have stayed unused this long: a sample
 * between two calls frees its slot for milliseconds, a busy spell's end (images, a stage barrier)
 * for seconds; giving back the first would only send reports back and forth.
 */
export const SPARE_SETTLE_MS = 150;

const wants = (d: EndpointDemand) => d.queued >= Math.max(1, d.holding / 8) && d.inFlight >= d.holding;
/**
 * The slots worth telling the desk about: while other workers want more (LeaseAnswer.wanted), an
 * eighth of the grant (at least one slot), since the desk hands them on at once; otherwise a quarter
 * (at least two), enough to spread the headroom again.
 */
const spareStep = (d: EndpointDemand, wanted: boolean) => (wanted ? Math.max(1, Math.floor(d.holding / 8)) : Math.max(2, d.holding / 4));
export const spares = (d: EndpointDemand, wanted: boolean): boolean => d.holding - d.inFlight - d.queued >= spareStep(d, wanted);

/**
 * A change since the last report that the workflow should hear of at once: requests now wait at the
 * grant (it wants more), a step of the grant is now unused (it can give back), or what the desk
 * still counts for this worker (the most of its requests in flight and its grant at the last report)
 * exceeds what it may hold now by a step: a lowered grant applied, or requests above it ended. Those
 * slots are what other workers wait for, and the desk frees them only when told. `wanted`: other
 * workers want more on this endpoint (the last answer said so): the steps are one eighth of the
 * grant, at least one slot, instead of a quarter and two.
 */
export function worthReporting(now: EndpointDemand, last: EndpointDemand | undefined, wanted = false): boolean {
  if (!last) return wants(now);
  if (wants(now) && !wants(last)) return true;
  if (spares(now, wanted) && !spares(last, wanted)) return true;
  const counted = Math.max(last.inFlight, last.holding);
  const step = wanted ? Math.max(1, Math.floor(now.holding / 8)) : Math.max(2, now.holding / 8);
  return counted > now.holding && counted - Math.max(now.inFlight, now.holding) >= step;
}

/**
 * The report of `endpoints` with the concurrency other workers want given back first: on the
 * endpoints named in `giving` (others want more there, by the last answer, and a step of the grant
 * has stayed unused here for SPARE_SETTLE_MS), the grant is lowered here to the requests in flight
 * and waiting, and reported so: the desk frees those slots with this report, instead of counting
 * them until the worker reports again with a lowered grant applied. The invariant holds: from now on
 * the worker admits within the lowered grant, which is what it reports holding.
 */
export function givingBack(endpoints: EndpointDemand[], giving: ReadonlySet<string>): EndpointDemand[] {
  const lowered: Record<string, number> = {};
  const report = endpoints.map((e) => {
    if (e.perMinute || !giving.has(e.endpoint) || !spares(e, true)) return e;
    lowered[e.endpoint] = e.inFlight + e.queued;
    return { ...e, holding: e.inFlight + e.queued };
  });
  lowerLeases(lowered);
  return report;
}

/** Sends one demand report to the lease workflow of `taskQueue`, starting it if none runs; resolves to its answer. */
export function reportDemand(client: Client, taskQueue: string, report: DemandReport): Promise<LeaseAnswer> {
  return client.workflow.executeUpdateWithStart(reportDemandUpdate, {
    args: [report],
    startWorkflowOperation: new WithStartWorkflowOperation(endpointLeases, {
      workflowId: endpointLeasesWorkflowId(taskQueue),
      taskQueue,
      workflowIdConflictPolicy: 'USE_EXISTING',
      args: [{ book: {}, newest: {} }],
    }),
  });
}

/** Lease loops of this process not yet ended (their worker stopped and its release settled). */
const loopsRunning = new Set<Promise<void>>();

/** The longest a stopping worker waits for the desk to hear its release. */
const RELEASE_WAIT_MS = 3_000;

/**
 * Resolves once every lease loop of this process has seen its worker stop and the desk has answered
 * (or refused) its release, or after `waitMs`. `mmif worker` awaits it before it closes its
 * connection: otherwise the release is cut off with the process, and the desk, honouring the lease,
 * keeps a stopped worker's slots from the others for its term plus drain (2.5 min by default).
 */
export async function leasesReleased(waitMs = RELEASE_WAIT_MS): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)));
  await Promise.race([Promise.all(loopsRunning), waited]);
  clearTimeout(timer);
}

/**
 * Leases this process's endpoint concurrency from the lease workflow of `taskQueue` (started by the
 * first report). While any endpoint has requests in flight or waiting, one report is always out:
 * the workflow answers when the grant changes (or after HOLD_MS), and the next report goes out with
 * the answer applied; when the desk holds as many reports as it may, it answers at once with a delay
 * (`again`) the next report waits out. A change worth reporting at once (worthReporting) sends a new report that
 * supersedes the waiting one. The grants applied hold until their term (leaseEnds); past it
 * unanswered, the worker admits nothing. Gives the leases back after IDLE_RELEASE_MS idle and when
 * the worker stops.
 */
export function leaseEndpointConcurrency(client: Client, taskQueue: string, worker: string, finished: () => boolean): void {
  /** The release sent when the worker stopped (answered or failed), awaited by leasesReleased. */
  let lastRelease: Promise<unknown> = Promise.resolve();
  let ended!: () => void;
  const end = new Promise<void>((resolve) => (ended = resolve));
  loopsRunning.add(end);
  const send = (demand: DemandReport) => {
    reportsSent++;
    return client.withDeadline(Date.now() + REPORT_DEADLINE_MS, () => reportDemand(client, taskQueue, demand));
  };
  // Starts at the clock: a restarted worker with the same identity (pid@host) is never taken for its older self.
  let seq = Date.now();
  /** The report out now (its seq), 0 for none. */
  let out = 0;
  let holding = false;
  /** When the grants applied stop holding (their term), while holding. */
  let leaseUntil = Number.POSITIVE_INFINITY;
  /** Other workers lease the same endpoints (as far as the last answer tells): alone, nothing is worth an early report. */
  let shared = true;
  /** The endpoints on which other workers want more (the last answer): unused slots go back at once. */
  let wanted = new Set<string>();
  /** Since when each endpoint wanted by others has had a step of its grant unused here. */
  const spareSince = new Map<string, number>();
  /** The endpoints whose unused step has settled (SPARE_SETTLE_MS): given back with the next report. */
  let giving = new Set<string>();
  let lastBusy = 0;
  let retryAt = 0;
  /** The desk answered without holding the report: the next one waits until then, unless a change is worth reporting early. */
  let againAt = 0;
  let reported = new Map<string, EndpointDemand>();
  let reportedAt = 0;
  const report = (demands: EndpointDemand[]): void => {
    const endpoints = givingBack(demands, giving);
    const mine = (out = ++seq);
    reported = new Map(endpoints.map((e) => [e.endpoint, e]));
    const sentAt = (reportedAt = Date.now());
    send({ worker, seq: mine, endpoints }).then(
      (answer) => {
        if (out !== mine) return;
        out = 0;
        if (answer.superseded) return; // by a report of an earlier self: the next check reports anew
        applyLeases(answer.grants);
        shared = answer.shared === true;
        wanted = new Set(answer.wanted);
        againAt = answer.again === undefined ? 0 : Date.now() + jittered(answer.again);
        holding = true;
        leaseUntil = leaseEnds(sentAt, answer);
        check();
      },
      (error: unknown) => {
        const cause = (error instanceof Error ? error.message : String(error)).slice(0, 80);
        reportFailures[cause] = (reportFailures[cause] ?? 0) + 1;
        if (out !== mine) return;
        out = 0;
        // The lease held stays until its term: the desk counts it that long.
        retryAt = Date.now() + jittered(RETRY_MS);
      },
    );
  };
  const check = (): void => {
    const now = Date.now();
    if (holding && now >= leaseUntil) {
      termsEnded++;
      dropLeases(); // admit nothing past the term; requests in flight drain within the desk's count
      leaseUntil = Number.POSITIVE_INFINITY;
    }
    const endpoints = endpointDemands();
    if (endpoints.some((e) => e.inFlight + e.queued > 0)) lastBusy = now;
    if (finished() || now - lastBusy > IDLE_RELEASE_MS) {
      if (!holding && out === 0) return;
      dropLeases(); // admit nothing more
      // The desk counts this worker's slots until told: a release waits for its requests in flight
      // to end, or the desk would grant slots still in use to another worker (over the cap).
      if (endpoints.some((e) => e.inFlight > 0)) return;
      holding = false;
      leaseUntil = Number.POSITIVE_INFINITY;
      out = 0;
      lastRelease = send({ worker, seq: ++seq, endpoints: [], release: true }).catch(() => {}); // unheard: the desk stops counting it after its term
      return;
    }
    for (const e of endpoints) {
      if (e.perMinute || !wanted.has(e.endpoint) || !spares(e, true)) spareSince.delete(e.endpoint);
      else if (!spareSince.has(e.endpoint)) spareSince.set(e.endpoint, now);
    }
    giving = new Set([...spareSince].filter(([, since]) => now - since >= SPARE_SETTLE_MS).map(([endpoint]) => endpoint));
    // Others want more: the small steps, once a step unused has settled (a step just freed may be a sample between calls).
    const quick = (e: EndpointDemand) => !e.perMinute && wanted.has(e.endpoint) && (giving.has(e.endpoint) || !spareSince.has(e.endpoint));
    // Alone on an endpoint, only a first lease is worth an early report (nobody else waits for what it spares).
    const early = () =>
      now - reportedAt >= MIN_GAP_MS && endpoints.some((e) => (shared || !reported.has(e.endpoint) || e.holding === 0) && worthReporting(e, reported.get(e.endpoint), quick(e)));
    if (out === 0 ? now >= retryAt && (now >= againAt || early()) : early()) report(endpoints);
  };
  leaseConcurrency(() => setImmediate(check));
  const loop = (): void => {
    check();
    // A stopped worker's loop ends once its release is out (or it held nothing).
    if (finished() && !holding && out === 0) {
      leaseConcurrency(undefined);
      void lastRelease.then(() => {
        loopsRunning.delete(end);
        ended();
      });
      return;
    }
    setTimeout(loop, CHECK_MS).unref();
  };
  loop();
}
