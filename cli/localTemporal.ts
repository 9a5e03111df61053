/**
 * Everything a build needs, in this process: a Temporal dev server, a worker and, unless
 * OPENAI_BASE_URL names an endpoint, the simulator. `mmif build --local` runs any config this way;
 * the same config runs on a real cluster without --local.
 */
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { startTemporalDevServer } from '../local/temporalDevServer.js';
import { startSimulator } from '../simulator/server.js';
import { createWorker } from '../worker/createWorker.js';
import type { Temporal } from './temporalClient.js';

const LOCAL_TASK_QUEUE = 'mmif-local';

/** Runs `work` against a local dev server while a worker serves it; stops them all afterwards. */
export async function withLocalTemporal<T>(work: (temporal: Temporal) => Promise<T>): Promise<T> {
  const simulator = process.env.OPENAI_BASE_URL ? undefined : await startSimulator({ seed: 7 });
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
