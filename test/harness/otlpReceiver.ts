/**
 * A small OTLP/HTTP receiver for tests and benchmarks: it answers POST /v1/traces and /v1/metrics and
 * decodes the JSON encoding (OTEL_EXPORTER_OTLP_PROTOCOL=http/json), keeping the spans flattened with
 * their resource's service.name and the metrics' attribute sets; a protobuf body (the default
 * protocol) is kept as received and answered, not decoded (that would need the collector's .proto files). The
 * layout read here is the OTLP specification's (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding:
 * resourceSpans[].scopeSpans[].spans[], attributes as {key, value: {stringValue | intValue | ...}},
 * trace and span ids as hex strings).
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export type OtlpValue = string | number | boolean | undefined;

export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  attributes: Record<string, OtlpValue>;
}

export interface MetricPoint {
  unit: string;
  attributes: Record<string, OtlpValue>;
  value: number;
}

export interface OtlpReceiver {
  /** The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
  url: string;
  spans(): ReceivedSpan[];
  /** Every metric received so far by name, with its data points (a sum's or gauge's value, a histogram's count), export after export. */
  metrics(): Map<string, MetricPoint[]>;
  /** The request bodies as received (JSON or protobuf), for a scan for secrets and a count of exports. */
  bodies(): string[];
  /** Each export request's headers, as received. */
  headers(): IncomingHttpHeaders[];
  close(): Promise<void>;
}

interface KeyValue {
  key: string;
  value: { stringValue?: string; intValue?: number | string; doubleValue?: number; boolValue?: boolean };
}

const valueOf = ({ value }: KeyValue): OtlpValue => value.stringValue ?? (value.intValue === undefined ? (value.doubleValue ?? value.boolValue) : Number(value.intValue));
const attributesOf = (list: KeyValue[] = []) => Object.fromEntries(list.map((kv) => [kv.key, valueOf(kv)]));

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const metrics = new Map<string, MetricPoint[]>();
  const bodies: string[] = [];
  const headers: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (req.method !== 'POST' || !['/v1/traces', '/v1/metrics'].includes(req.url ?? '')) {
        res.writeHead(404).end('this receiver takes OTLP/HTTP at /v1/traces and /v1/metrics\n');
        return;
      }
      bodies.push(body);
      headers.push(req.headers);
      // Protobuf: counted (bodies) and answered, not decoded.
      if (!req.headers['content-type']?.includes('json')) {
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
        return;
      }
      const parsed = JSON.parse(body) as { resourceSpans?: ResourceSpans[]; resourceMetrics?: ResourceMetrics[] };
      for (const r of parsed.resourceSpans ?? []) {
        const service = String(attributesOf(r.resource?.attributes)['service.name']);
        for (const scope of r.scopeSpans ?? [])
          for (const s of scope.spans ?? [])
            spans.push({ service, traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId ?? '', name: s.name, attributes: attributesOf(s.attributes) });
      }
      for (const r of parsed.resourceMetrics ?? [])
        for (const scope of r.scopeMetrics ?? [])
          for (const m of scope.metrics ?? []) {
            const points = m.sum?.dataPoints ?? m.gauge?.dataPoints ?? m.histogram?.dataPoints ?? [];
            const value = (p: DataPoint) => Number(p.asDouble ?? p.asInt ?? p.count);
            metrics.set(m.name, [...(metrics.get(m.name) ?? []), ...points.map((p) => ({ unit: m.unit ?? '', attributes: attributesOf(p.attributes), value: value(p) }))]);
          }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans: () => [...spans],
    metrics: () => new Map(metrics),
    bodies: () => [...bodies],
    headers: () => [...headers],
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

interface ResourceSpans {
  resource?: { attributes?: KeyValue[] };
  scopeSpans?: Array<{ spans?: Array<{ traceId: string; spanId: string; parentSpanId?: string; name: string; attributes?: KeyValue[] }> }>;
}

interface DataPoint {
  attributes?: KeyValue[];
  asDouble?: number;
  asInt?: number | string;
  count?: number | string;
}

interface ResourceMetrics {
  scopeMetrics?: Array<{
    metrics?: Array<{ name: string; unit?: string; sum?: { dataPoints: DataPoint[] }; gauge?: { dataPoints: DataPoint[] }; histogram?: { dataPoints: DataPoint[] } }>;
  }>;
}
