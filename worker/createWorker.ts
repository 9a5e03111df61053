/**
 * Builds the Temporal worker of `mmif worker` (and of --local runs and tests): its activities,
 * workflow bundle, interceptors, deployment version and the V8 heap settings its memory relies on.
 */
import { setFlagsFromString } from 'node:v8';
import { toCanonicalString, type WorkerDeploymentVersion } from '@temporalio/common';
import { NativeConnection, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import * as activities from '../activities/index.js';
import { prebuiltWorkflowBundle } from './bundleProcess.js';
import { becomeCurrentIfNone, currencyLine, versionedWorkerOptions, workerDeploymentVersion } from './deploymentVersion.js';
import { shareEndpointLimits } from './endpointSharing.js';
import { maskSecretsInActivityFailures } from './maskSecretsInterceptor.js';
import { maskingDataConverter } from './maskingPayloadCodec.js';
import { tracingActivityInterceptors, tracingSinks } from '../telemetry/tracing.js';

/**
 * How far V8 lets the heap grow past what survived its last full collection before the next one, in
 * percent: a fixed factor keeps a worker's heap near what is live (docs/adr/0025-worker-heap-growing-percent-20.md).
 * V8 reads this flag at every full collection, so setting it at run time works.
 */
const HEAP_GROWING_PERCENT = 20;

/** Applies HEAP_GROWING_PERCENT to this process (createWorker does; so does the traced bench worker). */
export function limitHeapGrowth(): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}

/**
 * The young generation of the workflow thread's V8 isolate, in MB per semi-space
 * (docs/adr/0018-workflow-thread-semi-space-1mb.md). V8 reads this flag when it creates an isolate, so
 * it is set only while the SDK starts the workflow thread; the worker's own (main) isolate keeps V8's default.
 */
const WORKFLOW_THREAD_SEMI_SPACE_MB = 1;

/** Runs `create` (Worker.create) with the workflow thread's young generation bounded, as createWorker does. */
export async function withSmallWorkflowThreadHeap<T>(create: () => Promise<T>): Promise<T> {
  setFlagsFromString(`--max-semi-space-size=${WORKFLOW_THREAD_SEMI_SPACE_MB}`);
  try {
    // The SDK's Worker.create resolves once its workflow thread is up, so its isolate exists by then.
    return await create();
  } finally {
    setFlagsFromString('--max-semi-space-size=0'); // 0: V8's default, for isolates created later
  }
}

/** How often a running activity's heartbeat actually reaches the server (and cancellation reaches it back). */
const HEARTBEAT_SEND_INTERVAL = '1s';

/**
 * How long a stopping worker (SIGTERM, SIGINT) waits for its activities after cancelling them:
 * they stop at their next model call or loop step, and whatever ignores the cancellation is cut
 * off here, to be retried by another worker.
 */
const SHUTDOWN_FORCE_TIME = '15s';

interface WorkerSetup {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  /**
   * A bundle in memory, for a process that starts several workers; without one, the worker starts from
   * the prebuilt bundle file of the current sources, built first if missing (worker/bundleProcess.ts).
   */
  workflowBundle?: WorkflowBundleWithSourceMap | { codePath: string };
  /**
   * Activity tasks run at once by this worker (default 64). A slice activity's samples share the
   * worker's sample lanes (activities/runtime.ts lanesForBuild): the lanes, not this, bound the model
   * calls in flight, so it is sized for the slices a build keeps waiting for lanes, not for the calls.
   */
  maxConcurrentActivities?: number;
  /** Activities per second across ALL workers of this task queue (Temporal enforces it server-side). */
  maxTaskQueueActivitiesPerSecond?: number;
  /**
   * The Worker Deployment Version this worker registers as (default: worker/deploymentVersion.ts, from
   * the environment and the bundle); `false` polls unversioned (the time-skipping test server knows no
   * deployments).
   */
  version?: WorkerDeploymentVersion | false;
  /** Told the worker's version line once the server has seen it (whether it is current; `mmif worker` prints it). */
  onVersion?: (line: string) => void;
}

/**
 * Enough for the slices a build dispatches to feed its lanes (domain/sampleLanes.ts DISPATCHED_PER_LANE):
 * their samples mostly wait, holding only their plan entries.
 */
export const DEFAULT_ACTIVITY_SLOTS = 64;

/**
 * The worker, sharing its endpoints' limits with the other workers of its task queue while it runs
 * (worker/endpointSharing.ts).
 */
export async function createWorker(setup: WorkerSetup): Promise<Worker> {
  limitHeapGrowth();
  const workflowBundle = setup.workflowBundle ?? { codePath: await prebuiltWorkflowBundle() };
  const version = setup.version === false ? undefined : (setup.version ?? (await workerDeploymentVersion(workflowBundle)));
  const worker = await withSmallWorkflowThreadHeap(() =>
    Worker.create({
      connection: setup.connection,
      namespace: setup.namespace,
      taskQueue: setup.taskQueue,
      activities,
      // A traced process (telemetry/tracing.ts startTracing) continues each workflow's trace in its activities.
      interceptors: { activity: [...tracingActivityInterceptors(), maskSecretsInActivityFailures] },
      sinks: tracingSinks(),
      dataConverter: maskingDataConverter,
      workflowBundle,
      // Workflows not declared otherwise (workflows/index.ts) finish on the version that started them.
      ...(version ? versionedWorkerOptions(version) : {}),
      maxConcurrentActivityTaskExecutions: setup.maxConcurrentActivities ?? DEFAULT_ACTIVITY_SLOTS,
      // A cancellation reaches an activity only in the answer to a heartbeat it sends; by default the
      // SDK sends one per 0.8 x heartbeat timeout (24 s), and a cancelled build would pay that long.
      maxHeartbeatThrottleInterval: HEARTBEAT_SEND_INTERVAL,
      // Running activities are cancelled at once on shutdown (their signal aborts their model calls).
      shutdownGraceTime: 0,
      shutdownForceTime: SHUTDOWN_FORCE_TIME,
      ...(setup.maxTaskQueueActivitiesPerSecond ? { maxTaskQueueActivitiesPerSecond: setup.maxTaskQueueActivitiesPerSecond } : {}),
    }),
  );
  const stopped = () => ['STOPPED', 'FAILED'].includes(worker.getState());
  shareEndpointLimits(setup.connection, setup.namespace, setup.taskQueue, stopped);
  if (version)
    becomeCurrentIfNone(setup.connection.workflowService, setup.namespace, version, stopped).then(
      (currency) => currency && setup.onVersion?.(currencyLine(version, currency)),
      (err: Error) => console.error(`worker version ${toCanonicalString(version)}: could not look up its deployment's current version: ${err.message}`),
    );
  return worker;
}
