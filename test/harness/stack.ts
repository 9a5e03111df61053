/**
 * The real components the integration tests run against, started once per test file: a Temporal
 * dev server (the `temporal` CLI from tools/), the HTTP simulator, and a worker on its own task
 * queue. Tests that need S3 add test/harness/s3Server.ts.
 */
import { Client, Connection } from '@temporalio/client';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { startTemporalDevServer, type DevServer } from '../../local/temporalDevServer.js';
import { startSimulator, type SimulatorHandle, type SimulatorOptions } from '../../simulator/server.js';
import { prebuiltWorkflowBundle } from '../../worker/bundleProcess.js';
import { createWorker } from '../../worker/createWorker.js';
import { maskingDataConverter } from '../../worker/maskingPayloadCodec.js';

export interface Stack {
  server: DevServer;
  simulator: SimulatorHandle;
  client: Client;
  taskQueue: string;
  /**
   * Starts (another) worker in this process, on the stack's task queue or another, as `version` of the
   * worker deployment (default: the bundle's, worker/deploymentVersion.ts); it runs until `stopWorkers` or `stop`.
   */
  startWorker(options?: WorkerOptions): Promise<Worker>;
  stopWorkers(): Promise<void>;
  /** Activities running now on this process's workers (Worker.getStatus()). */
  activitiesInFlight(): number;
  stop(): Promise<void>;
}

type WorkerOptions = { taskQueue?: string; maxTaskQueueActivitiesPerSecond?: number; version?: WorkerDeploymentVersion };

export async function startStack(options: { simulator?: SimulatorOptions; taskQueue?: string } = {}): Promise<Stack> {
  const [server, simulator, bundle] = await Promise.all([startTemporalDevServer(), startSimulator(options.simulator), prebuiltWorkflowBundle()]);
  process.env.OPENAI_BASE_URL = simulator.url;
  const connection = await Connection.connect({ address: server.address });
  const nativeConnection = await NativeConnection.connect({ address: server.address });
  const taskQueue = options.taskQueue ?? 'mmif-test';
  const running: Array<{ worker: Worker; done: Promise<void> }> = [];

  const startWorker = async (options: WorkerOptions = {}) => {
    const worker = await createWorker({
      connection: nativeConnection,
      namespace: 'default',
      taskQueue: options.taskQueue ?? taskQueue,
      workflowBundle: { codePath: bundle },
      maxTaskQueueActivitiesPerSecond: options.maxTaskQueueActivitiesPerSecond,
      version: options.version,
    });
    running.push({ worker, done: worker.run() });
    return worker;
  };
  const stopWorkers = async () => {
    for (const { worker } of running) if (worker.getState() === 'RUNNING') worker.shutdown();
    await Promise.allSettled(running.map((r) => r.done));
    running.length = 0;
  };
  await startWorker();
  return {
    server,
    simulator,
    // The CLI's converter: a workflow input is masked as `mmif build` masks it.
    client: new Client({ connection, dataConverter: maskingDataConverter }),
    taskQueue,
    startWorker,
    stopWorkers,
    activitiesInFlight: () => running.reduce((n, { worker }) => n + worker.getStatus().numInFlightActivities, 0),
    stop: async () => {
      await stopWorkers();
      await connection.close();
      await nativeConnection.close();
      await server.stop();
      await simulator.close();
    },
  };
}
