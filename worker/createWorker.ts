import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker, bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import * as activities from '../activities/index.js';
import { shareEndpointLimits } from './endpointSharing.js';

const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

export interface WorkerSetup {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  /** A pre-built bundle saves the few seconds of bundling when one process starts several workers. */
  workflowBundle?: WorkflowBundleWithSourceMap;
  /** Activity tasks run at once by this worker; each runs up to llm.concurrency model calls. */
  maxConcurrentActivities?: number;
  /** Activities per second across ALL workers of this task queue (Temporal enforces it server-side). */
  maxTaskQueueActivitiesPerSecond?: number;
}

export function bundleWorkflows(): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quietBundlerLogger });
}

/**
 * The worker, sharing its endpoints' limits with the other workers of its task queue while it runs
 * (worker/endpointSharing.ts).
 */
export async function createWorker(setup: WorkerSetup): Promise<Worker> {
  const worker = await Worker.create({
    connection: setup.connection,
    namespace: setup.namespace,
    taskQueue: setup.taskQueue,
    activities,
    ...(setup.workflowBundle ? { workflowBundle: setup.workflowBundle } : { workflowsPath: WORKFLOWS_PATH }),
    maxConcurrentActivityTaskExecutions: setup.maxConcurrentActivities ?? 16,
    ...(setup.maxTaskQueueActivitiesPerSecond ? { maxTaskQueueActivitiesPerSecond: setup.maxTaskQueueActivitiesPerSecond } : {}),
  });
  shareEndpointLimits(setup.connection, setup.namespace, setup.taskQueue, () => ['STOPPED', 'FAILED'].includes(worker.getState()));
  return worker;
}

const quietBundlerLogger = {
  log: () => {},
  trace: () => {},
  debug: () => {},
  info: () => {},
  warn: (message: string) => console.warn(message),
  error: (message: string) => console.error(message),
};
