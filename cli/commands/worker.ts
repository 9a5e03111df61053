import { parseArgs } from 'node:util';
import { NativeConnection } from '@temporalio/worker';
import { createWorker } from '../../worker/createWorker.js';
import { temporalSettingsFromEnv } from '../../worker/connectionFromEnv.js';
import { EXIT } from '../exitCodes.js';

export const WORKER_USAGE = `usage: mmif worker
  Run a worker: connects with TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS*,
  polls the task queue MMIF_TASK_QUEUE (default "mmif"); stops gracefully on SIGINT/SIGTERM.`;

export async function workerCommand(args: string[]): Promise<number> {
  parseArgs({ args, options: {} });
  const settings = temporalSettingsFromEnv();
  const connection = await NativeConnection.connect(settings.connection);
  const worker = await createWorker({ connection, namespace: settings.namespace, taskQueue: settings.taskQueue });
  console.log(`worker polling task queue '${settings.taskQueue}' on ${settings.connection.address} (namespace ${settings.namespace})`);
  await worker.run(); // returns after SIGINT/SIGTERM: the SDK shuts the worker down gracefully
  await connection.close();
  return EXIT.ok;
}
