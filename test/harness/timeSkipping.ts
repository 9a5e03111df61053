/**
 * Workflow tests on Temporal's time-skipping test server (@temporalio/testing), for workflow logic
 * that waits: a retry window, a dated scheduled run. The server is the Java one that
 * `tools/install.sh test` fetches from Maven Central (tools/bin/temporal-test-server: SDK's own
 * download comes from temporal.download, which is not a package registry). The worker is the
 * project's, with its real activities and workflow bundle, against the HTTP simulator.
 *
 * How time moves (@temporalio/testing, TestWorkflowEnvironment.createTimeSkipping): the server starts
 * with skipping locked, so time runs as on a real server while a test starts workflows, queries or
 * updates them; it skips ahead (timers fire at once when nothing else is in flight) while the test
 * awaits `handle.result()` on `env.client`, and on `env.sleep(duration)`.
 */
import { existsSync } from 'node:fs';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { TOOLS_DIR } from '../../local/tools.js';
import type { SimulatorHandle, SimulatorOptions } from '../../simulator/server.js';

/** The wrapper tools/install.sh writes around the Java test server. */
export const TEST_SERVER_PATH = `${TOOLS_DIR}bin/temporal-test-server`;

/**
 * The time-skipping server, started from TEST_SERVER_PATH. The SDK gives the JVM 5 s to listen (a
 * fixed limit of its core), which a loaded 2-core machine can miss; the server process is gone when
 * that fails, so starting again is safe, and a second start finds the JVM's files in the page cache.
 */
export async function createTimeSkippingEnv(attempts = 3): Promise<TestWorkflowEnvironment> {
  if (!existsSync(TEST_SERVER_PATH)) throw new Error(`${TEST_SERVER_PATH} is missing: run 'bash tools/install.sh test'`);
  const { TestWorkflowEnvironment } = await import('@temporalio/testing');
  for (let attempt = 1; ; attempt++) {
    try {
      return await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: TEST_SERVER_PATH } } });
    } catch (err) {
      if (attempt >= attempts || !/did not start within/.test(String(err))) throw err;
    }
  }
}

export interface TimeSkippingStack {
  env: TestWorkflowEnvironment;
  simulator: SimulatorHandle;
  taskQueue: string;
  stop(): Promise<void>;
}

/** The time-skipping server, the simulator, and one worker on `taskQueue`, running until `stop`. */
export async function startTimeSkippingStack(options: { simulator?: SimulatorOptions; taskQueue: string }): Promise<TimeSkippingStack> {
  const [{ startSimulator }, { prebuiltWorkflowBundle }, { createWorker }] = await Promise.all([
    import('../../simulator/server.js'),
    import('../../worker/bundleProcess.js'),
    import('../../worker/createWorker.js'),
  ]);
  const [env, simulator, bundle] = await Promise.all([createTimeSkippingEnv(), startSimulator(options.simulator), prebuiltWorkflowBundle()]);
  process.env.OPENAI_BASE_URL = simulator.url;
  let worker: Worker;
  try {
    worker = await createWorker({
      connection: env.nativeConnection,
      namespace: env.namespace ?? 'default',
      taskQueue: options.taskQueue,
      workflowBundle: { codePath: bundle },
      version: false,
    });
  } catch (err) {
    await Promise.allSettled([env.teardown(), simulator.close()]);
    throw err;
  }
  const running = worker.run();
  return {
    env,
    simulator,
    taskQueue: options.taskQueue,
    stop: async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
      await env.teardown();
      await simulator.close();
    },
  };
}
