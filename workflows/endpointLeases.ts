/**
 * The lease desk of one task queue's endpoints (docs/adr/0023-endpoint-limits-leased-by-demand.md):
 * workers report their demand per endpoint (an update) and each answer is the worker's grants
 * (llm/concurrencyLeases.ts). An answer that would not change a grant is held back (a long poll, up to
 * HOLD_MS), at most MAX_HELD at once since Temporal limits in-flight updates; an unchanged answer
 * beyond them goes out at once with `again`, paced so unheld workers send about UNHELD_REPORTS_PER_S,
 * and a worker owed capacity is held first (docs/adr/0024-lease-desk-owed-first.md). A report no newer
 * than the worker's newest (DemandReport.seq) is refused by the update's validator, before history.
 * Started by the first report (update-with-start, worker/endpointSharing.ts); continues as new before
 * its history grows long, and ends after IDLE_END without a report and with nothing leased.
 */
import { allHandlersFinished, condition, continueAsNew, defineUpdate, setHandler, workflowInfo } from '@temporalio/workflow';
import { forgetSilent, grantLeases, grantsMoved, type DemandReport, type LeaseAnswer, type LeaseBook } from '../llm/concurrencyLeases.js';

export const reportDemandUpdate = defineUpdate<LeaseAnswer, [DemandReport]>('reportDemand');

/** The lease desk's workflow id for a task queue. */
export const endpointLeasesWorkflowId = (taskQueue: string) => `mmif-endpoint-leases-${taskQueue}`;

/** Longest an unchanged answer is held back: the worker's report then also serves as a keep-alive. */
export const HOLD_MS = 3_000;
/** An update is ~5-7 events: roll over well before Temporal's history limits slow the workflow down. */
const MAX_HISTORY = 2_000;
const IDLE_END = '2 minutes';
/**
 * Answers held back at once, at most: with the reports arriving between two workflow tasks (at
 * UNHELD_REPORTS_PER_S and a workflow task's latency on a busy host), well within Temporal's default
 * in-flight update limit (10). 5 let a 16-worker fleet be refused at times (test/e2e/endpointSharing.test.ts).
 */
export const MAX_HELD = 3;
/** The reports per second the unheld workers send together, whatever their number (each reports every `again` ms). */
const UNHELD_REPORTS_PER_S = 8;
/** The shortest `again`: with few workers unheld, capacity still moves within a fraction of a second. */
const MIN_AGAIN_MS = 250;

/** How long an unheld worker waits before its next report, given the workers the book knows. */
export function againMs(book: LeaseBook): number {
  const workers = new Set(Object.values(book).flatMap((holders) => Object.keys(holders))).size;
  const unheld = Math.max(1, workers - MAX_HELD);
  return Math.min(HOLD_MS, Math.max(MIN_AGAIN_MS, Math.round((unheld * 1000) / UNHELD_REPORTS_PER_S)));
}

export interface LeaseDesk {
  book: LeaseBook;
  /** Each worker's newest report (DemandReport.seq). */
  newest: Record<string, number>;
}

/** The error a stale report is refused with (its update never enters history). */
export const STALE_REPORT = 'stale report';

/** Refuses a report no newer than its worker's newest one: an update retried or overtaken on its way. */
export function refuseStale(newest: Readonly<Record<string, number>>, report: DemandReport): void {
  const seen = newest[report.worker];
  if (seen !== undefined && report.seq <= seen) throw new Error(`${STALE_REPORT}: worker ${report.worker} sent seq ${report.seq}, the desk holds ${seen}`);
}

export async function endpointLeases(desk: LeaseDesk = { book: {}, newest: {} }): Promise<void> {
  const { book, newest } = desk;
  let reports = 0;
  let rollingOver = false;
  /** The answers held back now: whether each worker is owed capacity, and whether an owed one took its place. */
  const holding = new Set<{ owed: boolean; evicted: boolean }>();
  setHandler(
    reportDemandUpdate,
    async (report): Promise<LeaseAnswer> => {
      reports++;
      const superseded = () => newest[report.worker] !== report.seq;
      newest[report.worker] = report.seq;
      const answer = grantLeases(book, report, Date.now());
      const unchanged = (a: LeaseAnswer) => report.endpoints.every((d) => a.grants[d.endpoint] === d.holding);
      if (report.release || !unchanged(answer)) return answer;
      const full = holding.size >= MAX_HELD;
      // Full: a worker owed capacity takes the place of one that is not (its answer goes out now, as if
      // unheld), since what frees next is what the owed one waits for. No sooner `again` for an owed
      // worker left unheld: when a fleet starts, every worker is owed (32 reporting every 0.25 s starved
      // the desk: bench/notes/2026-11-25-the-lease-desk-at-16-and-32-workers.md).
      const evicted = full && answer.owed ? [...holding].find((h) => !h.owed && !h.evicted) : undefined;
      if (full && !evicted) return { ...answer, again: againMs(book) };
      if (evicted) evicted.evicted = true;
      const mine = { owed: answer.owed === true, evicted: false };
      holding.add(mine);
      try {
        await condition(() => superseded() || rollingOver || mine.evicted || grantsMoved(book, report), HOLD_MS);
      } finally {
        holding.delete(mine);
      }
      if (superseded()) return { grants: {}, superseded: true, termMs: 0 };
      const later = grantLeases(book, report, Date.now());
      return mine.evicted && unchanged(later) ? { ...later, again: againMs(book) } : later;
    },
    { validator: (report) => refuseStale(newest, report) },
  );
  const rollOver = () => workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > MAX_HISTORY;
  for (;;) {
    const seen = reports;
    if (await condition(rollOver, IDLE_END)) break;
    forgetSilent(book, Date.now());
    if (reports === seen && Object.keys(book).length === 0) return;
  }
  rollingOver = true;
  await condition(allHandlersFinished);
  const live = new Set(Object.values(book).flatMap((holders) => Object.keys(holders)));
  await continueAsNew<typeof endpointLeases>({ book, newest: Object.fromEntries(Object.entries(newest).filter(([worker]) => live.has(worker))) });
}
