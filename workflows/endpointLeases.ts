/**
 * The lease desk of one task queue's endpoints: the workers of the queue report their demand per
 * endpoint (an update, about twice a second while busy), and each answer is the worker's concurrency
 * grant (llm/concurrencyLeases.ts). Temporal serializes the updates and keeps the book durable, so the
 * workers need no coordination service of their own. One per task queue, started by the first
 * report (update-with-start, worker/endpointSharing.ts); it continues as new before its history
 * grows long and ends after IDLE_END without a report and with nothing leased.
 */
import { allHandlersFinished, condition, continueAsNew, defineUpdate, setHandler, workflowInfo } from '@temporalio/workflow';
import { forgetSilent, grantLeases, type DemandReport, type LeaseAnswer, type LeaseBook } from '../llm/concurrencyLeases.js';

export const reportDemandUpdate = defineUpdate<LeaseAnswer, [DemandReport]>('reportDemand');

/** The lease desk's workflow id for a task queue. */
export const endpointLeasesWorkflowId = (taskQueue: string) => `mmif-endpoint-leases-${taskQueue}`;

/** An update is ~5 events: roll over well before Temporal's history limits slow the workflow down. */
const MAX_HISTORY = 2_000;
const IDLE_END = '2 minutes';

export async function endpointLeases(book: LeaseBook = {}): Promise<void> {
  let reports = 0;
  setHandler(reportDemandUpdate, (report) => {
    reports++;
    return grantLeases(book, report, Date.now());
  });
  const rollOver = () => workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > MAX_HISTORY;
  for (;;) {
    const seen = reports;
    if (await condition(rollOver, IDLE_END)) break;
    forgetSilent(book, Date.now());
    if (reports === seen && Object.keys(book).length === 0) return;
  }
  await condition(allHandlersFinished);
  await continueAsNew<typeof endpointLeases>(book);
}
