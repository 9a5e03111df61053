/**
 * What a command exports over OTLP while it runs (`mmif worker`; `mmif build`, whose `--local` worker
 * runs in it): its spans (telemetry/tracing.ts) and the engine's metrics (telemetry/otlpMetrics.ts),
 * each on when the standard OTEL_* variables name an endpoint for it, and the last of both sent
 * however the command ends. Neither named: nothing is started.
 */
import { otlpTarget, startTracing, stopTracing } from './tracing.js';

export async function withOtlp<T>(serviceName: string, run: () => Promise<T>): Promise<T> {
  await startTracing(serviceName);
  // The exporter and the metrics registry load only when asked for (a plain `mmif build` is a light client).
  const metricsTarget = otlpTarget('METRICS');
  const metrics = metricsTarget && (await import('./otlpMetrics.js')).startOtlpMetrics(serviceName, metricsTarget.protocol);
  try {
    return await run();
  } finally {
    await metrics?.close();
    await stopTracing();
  }
}
