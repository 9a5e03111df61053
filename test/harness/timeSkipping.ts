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
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { TOOLS_DIR } from '../../local/tools.js';
import type { SimulatorHandle, SimulatorOptions } from '../../simulator/server.js';

/** The wrapper tools/install.sh writes around the Java test server. */
export const TEST_SERVER_PATH = `${TOOLS_DIR}bin/temporal-test-server`;

/**
 * The time-skipping server from TEST_SERVER_PATH, as a TestWorkflowEnvironment whose teardown also
 * stops it. Started here, not by `createTimeSkipping`: the SDK's core gives the JVM a fixed 5 s to
 * listen, which it misses on a loaded 2-core machine (every start failed at load 22-28, three tries
 * each). So this starts the server itself (`TestServer <port>`), waits until the port accepts, and
 * connects as `createTimeSkipping` does once its server is up: the SDK's static `create` with an
 * existing server and time skipping on (@temporalio/testing lib/testing-workflow-environment.js,
 * the call createFromExistingServer makes with time skipping off).
 */
export async function createTimeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  if (!existsSync(TEST_SERVER_PATH)) throw new Error(`${TEST_SERVER_PATH} is missing: run 'bash tools/install.sh test'`);
  const { TestWorkflowEnvironment } = await import('@temporalio/testing');
  const port = await freePort();
  const server = spawn(TEST_SERVER_PATH, [String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  server.stderr.on('data', (chunk: Buffer) => void (stderr = (stderr + chunk.toString()).slice(-2000)));
  const exited = new Promise<number | null>((resolve) => server.once('exit', resolve));
  const stop = async () => {
    if (server.exitCode === null && server.signalCode === null) server.kill();
    await exited;
  };
  try {
    await untilListening(port, exited, () => stderr);
    const create = (TestWorkflowEnvironment as unknown as { create(options: object): Promise<TestWorkflowEnvironment> }).create.bind(TestWorkflowEnvironment);
    const env = await create({ server: { type: 'existing' }, supportsTimeSkipping: true, address: `127.0.0.1:${port}`, namespace: 'default', connectionOptions: {} });
    const teardown = env.teardown.bind(env);
    env.teardown = async () => {
      await teardown();
      await stop();
    };
    return env;
  } catch (err) {
    await stop();
    throw err;
  }
}

/** A port nothing listens on now (the OS's pick for port 0). */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** Resolves once `port` accepts a connection; fails with the server's last output if it exits first. */
async function untilListening(port: number, exited: Promise<number | null>, output: () => string): Promise<void> {
  let gone: number | null | undefined;
  void exited.then((code) => (gone = code));
  for (;;) {
    if (gone !== undefined) throw new Error(`${TEST_SERVER_PATH} exited (${gone}) before listening on ${port}: ${output()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
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
  const started = await Promise.allSettled([createTimeSkippingEnv(), startSimulator(options.simulator), prebuiltWorkflowBundle()] as const);
  const [envStart, simulatorStart, bundleBuild] = started;
  if (envStart.status === 'rejected' || simulatorStart.status === 'rejected' || bundleBuild.status === 'rejected') {
    // What did start is stopped: a simulator left listening would keep the test process alive.
    await Promise.allSettled([envStart.status === 'fulfilled' && envStart.value.teardown(), simulatorStart.status === 'fulfilled' && simulatorStart.value.close()]);
    throw started.find((r): r is PromiseRejectedResult => r.status === 'rejected')!.reason;
  }
  const [env, simulator, bundle] = [envStart.value, simulatorStart.value, bundleBuild.value];
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
