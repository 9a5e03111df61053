/**
 * Endpoint limits across workers, from what the deployment already has: Temporal knows which worker
 * processes poll a task queue (DescribeTaskQueue lists each poller's identity and last access), so
 * every worker counts the live ones and admits 1/N of each endpoint's limits (llm/limiter.ts
 * shareEndpointsAmong). N workers then hold an endpoint at its configured concurrency or
 * per-minute rates together, with no hand-split cap and no coordination service.
 *
 * Liveness: a worker long-polls its workflow queue (about a minute per poll) even while all its
 * activity slots are busy, so a live worker's last access is never older than one poll; a worker
 * that died drops out of the count LIVE_MS after its last poll (until then the others keep its
 * share unused: under the limit, never over it).
 */
import type { NativeConnection } from '@temporalio/worker';
import { shareEndpointsAmong } from '../llm/limiter.js';

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
 * Recounts the live workers of `taskQueue` every RECOUNT_MS and shares this process's endpoint
 * limits among them (never fewer than 1: this worker itself may not have polled yet). A failed
 * count keeps the last one. Stops once `finished()` says the worker has stopped; its timer never
 * keeps the process alive.
 */
export function shareEndpointLimits(connection: NativeConnection, namespace: string, taskQueue: string, finished: () => boolean): void {
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
