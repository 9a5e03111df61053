/**
 * `mmif worker`: runs a worker on the task queue until SIGINT/SIGTERM, optionally serving its
 * metrics, and stops its activities promptly.
 */
import { parseFlags } from '../../config/commandFlags.js';
import { positiveEnvNumber } from '../../config/envNumber.js';
import { NativeConnection, Runtime } from '@temporalio/worker';
import { createWorker } from '../../worker/createWorker.js';
import { leasesReleased } from '../../worker/endpointSharing.js';
import { temporalSettingsFromEnv } from '../../worker/connectionFromEnv.js';
import { EXIT } from '../exitCodes.js';
import { temporalUnreachable } from '../temporalClient.js';
import { startMetricsServer } from '../../telemetry/metricsServer.js';
import { metricsAddressOrUsage, metricsFailed } from '../metricsFlag.js';
import { withOtlp } from '../../telemetry/otlp.js';
import { FORWARDED_LOGS, watchTemporal, workerLogger } from '../workerTemporalWatch.js';

export const WORKER_USAGE = `usage: mmif worker [--metrics HOST:PORT]
  Run a worker: connects with TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS*,
  polls the task queue MMIF_TASK_QUEUE (default "mmif"); on SIGINT/SIGTERM cancels its running
  activities (their model calls and limiter waits end at once) and exits within 15 s at most.
  MMIF_TASK_QUEUE_ACTIVITIES_PER_SECOND caps activities/s across all workers of that queue (use one
  queue per endpoint: models.<role>.taskQueue); MMIF_MAX_CONCURRENT_ACTIVITIES (64) per worker.
  Registers as version MMIF_BUILD_ID (default: a hash of the workflow code) of the worker deployment
  MMIF_DEPLOYMENT (default "mmif"): builds finish on the version that started them, and a new version
  takes new builds once made current (docs/operations.md, rolling out a new version).
  --metrics HOST:PORT  serve Prometheus metrics at http://HOST:PORT/metrics, the engine's and the
                 Temporal SDK's (default MMIF_METRICS_ADDR; a bare port binds 127.0.0.1; docs/operations.md)
  With OTEL_EXPORTER_OTLP_ENDPOINT set, sends its spans of each build's trace and the engine's metrics
  over OTLP (http/protobuf, or OTEL_EXPORTER_OTLP_PROTOCOL=http/json; docs/operations.md).`;

/** `mmif worker`, its spans and metrics sent over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set (telemetry/otlp.ts), the last ones as it stops. */
export function workerCommand(args: string[]): Promise<number> {
  return withOtlp('mmif-worker', () => runWorker(args));
}

async function runWorker(args: string[]): Promise<number> {
  const { values } = parseFlags({ args, options: { metrics: { type: 'string' } } });
  const metricsAt = metricsAddressOrUsage(values.metrics);
  // Read before connecting: a bad one fails at once (a ConfigError: exit 2, cli/mmif.ts).
  const maxConcurrentActivities = positiveEnvNumber('MMIF_MAX_CONCURRENT_ACTIVITIES');
  const maxTaskQueueActivitiesPerSecond = positiveEnvNumber('MMIF_TASK_QUEUE_ACTIVITIES_PER_SECOND');
  // Before the connection: the SDK's runtime is installed once, with its metrics exporter and a log
  // that leaves the per-retry warnings of a lost connection to the watcher's two lines.
  const runtime = { logger: workerLogger, telemetryOptions: { logging: FORWARDED_LOGS } };
  const metrics = metricsAt && (await startMetricsServer(metricsAt, runtime).catch(metricsFailed));
  if (metrics) console.log(`metrics at http://${metrics.address}/metrics`);
  else Runtime.install(runtime);
  const settings = temporalSettingsFromEnv();
  const connection = await NativeConnection.connect(settings.connection).catch((err: Error) => {
    throw temporalUnreachable(settings, err);
  });
  // The SDK's own check of the namespace comes with a Rust status dump: this one fails in one line.
  await connection.workflowService.describeNamespace({ namespace: settings.namespace }).catch(async (err: Error) => {
    await connection.close();
    throw temporalUnreachable(settings, err);
  });
  const worker = await createWorker({
    connection,
    namespace: settings.namespace,
    taskQueue: settings.taskQueue,
    maxConcurrentActivities,
    maxTaskQueueActivitiesPerSecond,
    onVersion: (line) => console.log(line),
  });
  console.log(`worker polling task queue '${settings.taskQueue}' on ${settings.connection.address} (namespace ${settings.namespace})`);
  const watch = watchTemporal(connection, settings.connection.address);
  await worker.run(); // returns after SIGINT/SIGTERM: the SDK shuts the worker down gracefully
  watch.stop();
  await leasesReleased(); // the desk hears it stopped: its endpoint slots go to the other workers at once
  await connection.close();
  await metrics?.close();
  return EXIT.ok;
}
