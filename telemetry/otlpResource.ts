/**
 * The OpenTelemetry resource this process's traces and OTLP metrics carry, in a module of its own so
 * the metrics exporter loads it without the trace SDK (telemetry/otlpSdk.ts).
 */
import { envDetectorSync, Resource } from '@opentelemetry/resources';

/** service.name, overridden by OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES. */
export function otelResource(serviceName: string): Resource {
  return Resource.default()
    .merge(new Resource({ 'service.name': serviceName }))
    .merge(envDetectorSync.detect());
}
