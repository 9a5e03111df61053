/**
 * `mmif worker` with one knob more, for the benchmarks: BENCH_MAX_ACTIVITIES sets the worker's
 * maxConcurrentActivities (createWorker's default, and so `mmif worker`'s, is 16). Same connection
 * settings (TEMPORAL_ADDRESS, MMIF_TASK_QUEUE, ...) and the same graceful stop on SIGINT/SIGTERM.
 *
 * Run:   BENCH_MAX_ACTIVITIES=32 node --import tsx bench/benchWorker.ts
 */
import { NativeConnection } from '@temporalio/worker';
import { createWorker } from '../worker/createWorker.js';
import { temporalSettingsFromEnv } from '../worker/connectionFromEnv.js';

const max = Number(process.env.BENCH_MAX_ACTIVITIES ?? '16');
if (!Number.isInteger(max) || max < 1) throw new Error(`BENCH_MAX_ACTIVITIES must be a positive integer, got ${process.env.BENCH_MAX_ACTIVITIES}`);
const settings = temporalSettingsFromEnv();
const connection = await NativeConnection.connect(settings.connection);
const worker = await createWorker({ connection, namespace: settings.namespace, taskQueue: settings.taskQueue, maxConcurrentActivities: max });
console.log(`worker polling task queue '${settings.taskQueue}' on ${settings.connection.address} (maxConcurrentActivities ${max})`);
await worker.run();
await connection.close();
