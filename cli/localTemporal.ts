/**
 * Everything a build needs, in this process: a Temporal dev server, a worker and, unless
 * OPENAI_BASE_URL names an endpoint, the simulator. `mmif build --local` runs any config this way;
 * the same config runs on a real cluster without --local.
 */
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { startTemporalDevServer, type DevServer } from '../local/temporalDevServer.js';
import { startSimulator, type SimulatorHandle } from '../simulator/server.js';
import { createWorker } from '../worker/createWorker.js';
import { startMetricsServer } from '../telemetry/metricsServer.js';
import { tracingClientInterceptors } from '../telemetry/tracing.js';
import { metricsFailed } from './metricsFlag.js';
import { maskingDataConverter } from '../worker/maskingPayloadCodec.js';
import type { Temporal } from './temporalClient.js';
import type { BuildConfig } from '../config/buildConfig.js';
import { MODEL_ROLES, type ModelRole } from '../config/modelsConfig.js';
import { endpointFor } from '../config/endpointRouting.js';
import { namesBaseUrl } from '../config/endpointReplicas.js';

/**
 * The model roles whose endpoint sets no `baseUrl`: they are called at the worker's OPENAI_BASE_URL
 * (llm/endpoint.ts resolveBaseUrl), the simulator's when this command starts one. A config whose
 * every role names its own endpoint needs no simulator: nothing would be simulated.
 */
export const rolesOnEnvBaseUrl = (config: Pick<BuildConfig, 'models'>): ModelRole[] => MODEL_ROLES.filter((role) => !namesBaseUrl(endpointFor(config as BuildConfig, role)));

const LOCAL_TASK_QUEUE = 'mmif-local';

/**
 * The endpoint URL is part of every model-call cache key, so the local simulator listens on one
 * port from run to run: a second `--local` build or eval over the same output then reuses the
 * first one's replies. Another port is taken only when this one is busy (and the cache then misses).
 */
const LOCAL_SIMULATOR_PORT = 18_431;

async function startLocalSimulator(): Promise<SimulatorHandle> {
  try {
    return await startSimulator({ seed: 7, port: LOCAL_SIMULATOR_PORT });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    console.log(`port ${LOCAL_SIMULATOR_PORT} is busy: the simulator takes another, so earlier cached replies will not match`);
    return startSimulator({ seed: 7 });
  }
}

/** Where this command's model calls go: the simulator it started (for which roles), OPENAI_BASE_URL, or the config's own endpoints. */
export function endpointLine(simulatorUrl: string | undefined, onEnv: readonly ModelRole[], envBaseUrl = process.env.OPENAI_BASE_URL): string {
  if (onEnv.length === 0) return "model endpoints: each model role's own baseUrl from the config (no simulator)";
  const whose = onEnv.length === MODEL_ROLES.length ? 'answers' : `answers of ${onEnv.join(', ')}`;
  return simulatorUrl ? `simulator: ${simulatorUrl} (${whose} will be SIMULATED)` : `model endpoint: ${envBaseUrl}`;
}

/** Starts of the dev server tried: one failed start under load is retried once (then the error is the user's). */
const SERVER_START_ATTEMPTS = 2;
/** How long a started dev server gets to answer as healthy. */
const HEALTHY_WITHIN_MS = 60_000;

/**
 * A dev server whose frontend answers: its port opens before the frontend serves ("Frontend is not
 * healthy yet"), so a namespace lookup is retried until it succeeds. A start that fails, or never
 * gets healthy, is stopped and tried once more.
 */
async function startHealthyServer(): Promise<{ server: DevServer; connection: Connection }> {
  for (let attempt = 1; ; attempt++) {
    let server: DevServer | undefined;
    try {
      server = await startTemporalDevServer();
      const connection = await Connection.connect({ address: server.address });
      await untilHealthy(connection).catch(async (err: unknown) => {
        await connection.close();
        throw err;
      });
      return { server, connection };
    } catch (err) {
      await server?.stop();
      if (attempt >= SERVER_START_ATTEMPTS) throw new Error(`the local Temporal dev server did not start: ${(err as Error).message}`);
      console.log(`the local Temporal dev server did not start (${(err as Error).message}); trying once more`);
    }
  }
}

async function untilHealthy(connection: Connection): Promise<void> {
  const deadline = Date.now() + HEALTHY_WITHIN_MS;
  for (;;) {
    try {
      await connection.workflowService.describeNamespace({ namespace: 'default' });
      return;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`not healthy within ${HEALTHY_WITHIN_MS / 1000} s: ${(err as Error).message}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/**
 * Worker log lines on the console, level and message only. An activity's or a workflow's failure
 * is left out: its cause reaches the user as the build's one line (cli/buildRun.ts), and the SDK's
 * entry (the error with its stack, the task token) would bury it.
 */
const FAILURE_DUMPS = new Set(['Activity failed', 'Workflow failed']);
const quietLogger = new DefaultLogger('WARN', (entry) => {
  if (!FAILURE_DUMPS.has(entry.message)) console.error(`${entry.level.toLowerCase()}: ${entry.message}`);
});

/**
 * Runs `work` against a local dev server while a worker serves it; stops them all afterwards, on an
 * error and on SIGINT/SIGTERM too, so nothing it started outlives the command.
 */
export async function withLocalTemporal<T>(
  work: (temporal: Temporal) => Promise<T>,
  config?: Pick<BuildConfig, 'models'>,
  /** Where to serve the worker's metrics (telemetry/metricsServer.ts), if anywhere. */
  metricsAt?: { host: string; port: number },
): Promise<T> {
  const started: Array<() => Promise<void>> = [];
  // One stop for all callers: the signal handler and the `finally` below may both ask.
  let stopping: Promise<void> | undefined;
  const stopAll = () =>
    (stopping ??= (async () => {
      for (const stop of started.reverse()) await stop().catch(() => {});
    })());
  let interrupted: NodeJS.Signals | undefined;
  // What the Ctrl-C line names: a simulator only when this command started one.
  let withSimulator = false;
  const exitCode = (signal: NodeJS.Signals) => (signal === 'SIGINT' ? 130 : 143);
  const onSignal = (signal: NodeJS.Signals) => {
    interrupted = signal;
    console.error(`\n${signal}: stopping the local worker${withSimulator ? ', Temporal dev server and simulator' : ' and Temporal dev server'}`);
    void stopAll().finally(() => process.exit(exitCode(signal)));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    // Without a config (an eval's, the quickstart's own) every call goes to OPENAI_BASE_URL.
    const onEnv = config ? rolesOnEnvBaseUrl(config) : MODEL_ROLES;
    const simulator = process.env.OPENAI_BASE_URL || onEnv.length === 0 ? undefined : await startLocalSimulator();
    if (simulator) {
      withSimulator = true;
      started.push(() => simulator.close());
      process.env.OPENAI_BASE_URL = simulator.url;
    }
    console.log(endpointLine(simulator?.url, onEnv));
    // The screen is for progress and the summary; worker lifecycle logs would bury them.
    if (metricsAt) {
      const metrics = await startMetricsServer(metricsAt, { logger: quietLogger }).catch(metricsFailed);
      started.push(() => metrics.close());
      console.log(`metrics at http://${metrics.address}/metrics`);
    } else Runtime.install({ logger: quietLogger });
    const { server, connection } = await startHealthyServer();
    started.push(
      () => server.stop(),
      () => connection.close(),
    );
    console.log(`temporal dev server: ${server.address}`);
    const nativeConnection = await NativeConnection.connect({ address: server.address });
    started.push(() => nativeConnection.close());
    const worker = await createWorker({ connection: nativeConnection, namespace: 'default', taskQueue: LOCAL_TASK_QUEUE });
    const settings = { connection: { address: server.address }, namespace: 'default', taskQueue: LOCAL_TASK_QUEUE };
    return await worker.runUntil(() =>
      work({ client: new Client({ connection, dataConverter: maskingDataConverter, interceptors: tracingClientInterceptors() }), settings, close: async () => {} }),
    );
  } finally {
    await stopAll();
    // Interrupted: the work's own ending (the worker shut down under it) is not the outcome.
    if (interrupted) process.exit(exitCode(interrupted));
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
