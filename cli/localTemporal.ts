/**
 * Everything a build needs, in this process: a Temporal dev server, a worker and, unless
 * OPENAI_BASE_URL names an endpoint, the simulator. `mmif build --local` runs any config this way;
 * the same config runs on a real cluster without --local.
 */
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { startTemporalDevServer } from '../local/temporalDevServer.js';
import { startSimulator, type SimulatorHandle } from '../simulator/server.js';
import { createWorker } from '../worker/createWorker.js';
import type { Temporal } from './temporalClient.js';

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

/** Runs `work` against a local dev server while a worker serves it; stops them all afterwards. */
export async function withLocalTemporal<T>(work: (temporal: Temporal) => Promise<T>): Promise<T> {
  const simulator = process.env.OPENAI_BASE_URL ? undefined : await startLocalSimulator();
  if (simulator) process.env.OPENAI_BASE_URL = simulator.url;
  console.log(simulator ? `simulator: ${simulator.url} (answers will be SIMULATED)` : `model endpoint: ${process.env.OPENAI_BASE_URL}`);
  // The screen is for progress and the summary; worker lifecycle logs would bury them.
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const server = await startTemporalDevServer();
  console.log(`temporal dev server: ${server.address}`);
  const nativeConnection = await NativeConnection.connect({ address: server.address });
  const connection = await Connection.connect({ address: server.address });
  try {
    const worker = await createWorker({ connection: nativeConnection, namespace: 'default', taskQueue: LOCAL_TASK_QUEUE });
    const settings = { connection: { address: server.address }, namespace: 'default', taskQueue: LOCAL_TASK_QUEUE };
    return await worker.runUntil(() => work({ client: new Client({ connection }), settings, close: async () => {} }));
  } finally {
    await connection.close();
    await nativeConnection.close();
    await server.stop();
    await simulator?.close();
  }
}
