/**
 * The OpenTelemetry SDK side of the OTLP export, loaded only when an endpoint is named
 * (telemetry/tracing.ts startTracing, telemetry/otlp.ts): a plain `mmif build` without one never
 * loads these packages (~0.2 s of CPU). The tracer provider with a batch processor and the
 * OTLP/HTTP exporter of the protocol asked (the exporter reads the endpoint, headers, timeout and
 * compression variables itself), registered globally with W3C trace context (register()'s default,
 * OTEL_PROPAGATORS may change it) and an AsyncLocalStorage context, so spans nest across awaits; the
 * SDK's activity interceptors and the sink the workflow interceptors hand their spans to.
 */
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/worker/index.js';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import type { WorkflowInfo } from '@temporalio/workflow';
import type { SerializableSpan } from '@temporalio/interceptors-opentelemetry/lib/workflow/definitions.js';
import { otelResource } from './otlpResource.js';
import type { OtlpProtocol } from './tracing.js';

export interface TracerSetup {
  /** Sends what is buffered and stops. */
  shutdown(): Promise<void>;
  activityInterceptors: ActivityInterceptorsFactory;
  /** Where the workflow interceptors' spans go: only the workflow's type and ids join their attributes (not its memo or search attributes). */
  exportWorkflowSpans(info: WorkflowInfo, spans: SerializableSpan[]): void | Promise<void>;
}

/** Registers this process's tracer provider, exporting over `protocol`. */
export function registerTracer(serviceName: string, protocol: OtlpProtocol): TracerSetup {
  const exporter = protocol === 'http/json' ? new JsonTraceExporter() : new ProtobufTraceExporter();
  const processor = new BatchSpanProcessor(exporter);
  const resource = otelResource(serviceName);
  const provider = new BasicTracerProvider({ resource });
  provider.addSpanProcessor(processor);
  provider.register({ contextManager: new AsyncLocalStorageContextManager().enable() });
  const workflowSpans = makeWorkflowExporter(processor, resource).export.fn;
  return {
    shutdown: () => provider.shutdown(),
    activityInterceptors: (ctx) => ({ inbound: new OpenTelemetryActivityInboundInterceptor(ctx), outbound: new OpenTelemetryActivityOutboundInterceptor(ctx) }),
    exportWorkflowSpans: (info, spans) => workflowSpans({ workflowType: info.workflowType, workflowId: info.workflowId, runId: info.runId } as WorkflowInfo, spans),
  };
}
