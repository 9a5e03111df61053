/**
 * The engine's metrics over OTLP, beside (or instead of) the Prometheus scrape: the same prom-client
 * instruments (telemetry/metrics.ts), read every OTEL_METRIC_EXPORT_INTERVAL ms (default 60000) and
 * pushed to OTEL_EXPORTER_OTLP_(METRICS_)ENDPOINT by OpenTelemetry's OTLP exporter, over
 * http/protobuf or http/json as telemetry/tracing.ts otlpTarget reads the protocol. Names go back
 * to OpenTelemetry's spelling, the reverse of how its Prometheus exporters write them
 * (https://opentelemetry.io/docs/specs/otel/compatibility/prometheus_and_openmetrics/): a `_total`
 * or `_seconds` suffix is dropped (the unit becomes `s`), and a `gen_ai_*`, `server_*` or `error_*`
 * name or label takes its dots back (`gen_ai.client.operation.duration`, `gen_ai.request.model`,
 * `server.address`). Values are cumulative, as the scrape's. The Temporal SDK's own metrics stay on
 * the scrape (its runtime exports to one place: docs/operations.md).
 */
import { ValueType, type Attributes, type HrTime } from '@opentelemetry/api';
import { OTLPMetricExporter as JsonMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as ProtobufMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { Resource } from '@opentelemetry/resources';
import {
  AggregationTemporality,
  DataPointType,
  InstrumentType,
  MeterProvider,
  PeriodicExportingMetricReader,
  type MetricData,
  type MetricProducer,
} from '@opentelemetry/sdk-metrics';
import { positiveEnvNumber } from '../config/envNumber.js';
import { enableMetrics, engineMetricsJson, type MetricFamily } from './metrics.js';
import { otelResource } from './otlpResource.js';
import type { OtlpProtocol } from './tracing.js';

/** OTEL_METRIC_EXPORT_INTERVAL's default (the OpenTelemetry SDK configuration spec), ms. */
const DEFAULT_INTERVAL_MS = 60_000;
/** OTEL_METRIC_EXPORT_TIMEOUT's default, ms (at most the interval). */
const DEFAULT_TIMEOUT_MS = 30_000;

interface OtlpMetrics {
  /** Sends the metrics once more and stops. */
  close(): Promise<void>;
}

/**
 * Starts pushing the engine's metrics to the OTLP metrics endpoint the environment names (`protocol`
 * as telemetry/tracing.ts otlpTarget read it), and records them from then on.
 */
export function startOtlpMetrics(serviceName: string, protocol: OtlpProtocol): OtlpMetrics {
  const interval = exportMs('OTEL_METRIC_EXPORT_INTERVAL') ?? DEFAULT_INTERVAL_MS;
  const exporter = protocol === 'http/json' ? new JsonMetricExporter() : new ProtobufMetricExporter();
  const reader = new PeriodicExportingMetricReader({
    exporter,
    exportIntervalMillis: interval,
    exportTimeoutMillis: Math.min(interval, exportMs('OTEL_METRIC_EXPORT_TIMEOUT') ?? DEFAULT_TIMEOUT_MS),
    metricProducers: [engineProducer(Date.now())],
  });
  // The provider has no instruments of its own: it binds the reader, which adds the engine's.
  const provider = new MeterProvider({ resource: otelResource(serviceName), readers: [reader] });
  enableMetrics();
  return {
    close: () => provider.shutdown().catch((err: Error) => console.error(`metrics: could not send the last OTLP export: ${err.message}`)),
  };
}

const exportMs = (name: string): number | undefined => positiveEnvNumber(name, process.env, 'milliseconds');

/** The engine's prom-client metrics as OTLP metric data, cumulative since `startedMs`. */
function engineProducer(startedMs: number): MetricProducer {
  const startTime = hrTime(startedMs);
  return {
    async collect() {
      const endTime = hrTime(Date.now());
      const metrics = (await engineMetricsJson()).flatMap((family) => {
        const one = metricData(family, startTime, endTime);
        return one ? [one] : [];
      });
      return { resourceMetrics: { resource: Resource.empty(), scopeMetrics: [{ scope: { name: 'mmif' }, metrics }] }, errors: [] };
    },
  };
}

const hrTime = (ms: number): HrTime => [Math.floor(ms / 1000), (ms % 1000) * 1e6];

/** A Prometheus name or label in OpenTelemetry's spelling (see the header). */
export function otelName(promName: string): string {
  const match = /^(gen_ai|server|error)_(.+)$/.exec(promName);
  return match ? `${match[1]}.${match[2]!.replaceAll('_', '.')}` : promName;
}

/** A metric's OpenTelemetry name and unit from its Prometheus name and type. */
export function otelMetricName(promName: string, type: MetricFamily['type']): { name: string; unit: string } {
  let name = type === 'counter' ? promName.replace(/_total$/, '') : promName;
  const seconds = name.endsWith('_seconds');
  if (seconds) name = name.slice(0, -'_seconds'.length);
  return { name: otelName(name), unit: seconds ? 's' : '' };
}

const attributesOf = (labels: MetricFamily['values'][number]['labels'], without?: string): Attributes =>
  Object.fromEntries(Object.entries(labels).flatMap(([k, v]) => (k === without || v === undefined ? [] : [[otelName(k), v]])));

function metricData(family: MetricFamily, startTime: HrTime, endTime: HrTime): MetricData | undefined {
  if (family.values.length === 0) return undefined;
  const { name, unit } = otelMetricName(family.name, family.type);
  const point = <T>(attributes: Attributes, value: T) => ({ startTime, endTime, attributes, value });
  const base = { name, description: family.help, unit, valueType: ValueType.DOUBLE };
  if (family.type === 'counter')
    return {
      descriptor: { ...base, type: InstrumentType.COUNTER },
      aggregationTemporality: AggregationTemporality.CUMULATIVE,
      dataPointType: DataPointType.SUM,
      isMonotonic: true,
      dataPoints: family.values.map((v) => point(attributesOf(v.labels), v.value)),
    };
  if (family.type === 'gauge')
    return {
      descriptor: { ...base, type: InstrumentType.OBSERVABLE_GAUGE },
      aggregationTemporality: AggregationTemporality.CUMULATIVE,
      dataPointType: DataPointType.GAUGE,
      dataPoints: family.values.map((v) => point(attributesOf(v.labels), v.value)),
    };
  if (family.type === 'histogram') return { descriptor: { ...base, type: InstrumentType.HISTOGRAM }, ...histogramPoints(family, point) };
  return undefined;
}

type Histo = { buckets: { boundaries: number[]; counts: number[] }; sum: number; count: number };

/**
 * prom-client gives a histogram as cumulative `_bucket` series (one per `le`, `+Inf` last), `_sum`
 * and `_count`, per label set; OTLP wants per-bucket counts with the bounds, and the overflow bucket.
 */
function histogramPoints(family: MetricFamily, point: (attributes: Attributes, value: Histo) => { startTime: HrTime; endTime: HrTime; attributes: Attributes; value: Histo }) {
  const series = new Map<string, { attributes: Attributes; bounds: number[]; cumulative: number[]; sum: number; count: number }>();
  for (const v of family.values) {
    const attributes = attributesOf(v.labels, 'le');
    const key = JSON.stringify(attributes);
    let one = series.get(key);
    if (!one) series.set(key, (one = { attributes, bounds: [], cumulative: [], sum: 0, count: 0 }));
    if (v.metricName?.endsWith('_sum')) one.sum = v.value;
    else if (v.metricName?.endsWith('_count')) one.count = v.value;
    else if (v.labels.le !== '+Inf') {
      one.bounds.push(Number(v.labels.le));
      one.cumulative.push(v.value);
    }
  }
  return {
    aggregationTemporality: AggregationTemporality.CUMULATIVE,
    dataPointType: DataPointType.HISTOGRAM as const,
    dataPoints: [...series.values()].map((s) => {
      const counts = [...s.cumulative, s.count].map((c, i, all) => c - (i === 0 ? 0 : all[i - 1]!));
      return point(s.attributes, { buckets: { boundaries: s.bounds, counts }, sum: s.sum, count: s.count });
    }),
  };
}
