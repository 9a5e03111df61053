/**
 * Traces of a build over OTLP, on when OTEL_EXPORTER_OTLP_ENDPOINT (or ..._TRACES_ENDPOINT) is set:
 * `mmif build` opens the build's span, the Temporal SDK's OpenTelemetry interceptors carry its
 * context into the workflow, its shard children and their activities (@temporalio/interceptors-opentelemetry,
 * https://github.com/temporalio/samples-typescript/tree/main/interceptors-opentelemetry), and the
 * engine adds a span per sample and stage and one per model-call attempt (`inSpan`). The exporters
 * read the standard variables themselves (endpoint, headers, timeout, compression:
 * https://opentelemetry.io/docs/specs/otel/protocol/exporter/); the protocol is http/protobuf unless
 * OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL says http/json. Unset, the SDK is not loaded (telemetry/otlpSdk.ts)
 * and `inSpan` runs its work directly. Attributes are bounded: stage, source, role, model,
 * endpoint host, outcome, never a prompt, a sample id or a key. Why these packages: docs/adr/0061-traces-with-the-sdk-interceptors.md.
 */
import { context, createContextKey, SpanStatusCode, trace, type Attributes, type Tracer } from '@opentelemetry/api';
import type { ClientInterceptors } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry/lib/client/index.js';
import type { OpenTelemetrySinks } from '@temporalio/interceptors-opentelemetry/lib/workflow/definitions.js';
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import type { TracerSetup } from './otlpSdk.js';
import { ConfigError } from '../config/configError.js';

/** The OTLP protocols this engine exports with (gRPC is not among them: docs/adr/0061). */
export type OtlpProtocol = 'http/protobuf' | 'http/json';

/**
 * Where a signal (`TRACES`, `METRICS`) goes and how, from the standard variables: undefined when no
 * endpoint is set, the SDK is disabled (OTEL_SDK_DISABLED=true) or the signal's exporter is `none`.
 * Throws one line naming the variable for a protocol it cannot speak.
 */
export function otlpTarget(signal: 'TRACES' | 'METRICS', env: NodeJS.ProcessEnv = process.env): { protocol: OtlpProtocol } | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  if (env[`OTEL_${signal}_EXPORTER`]?.trim() === 'none') return undefined;
  if (!env[`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`]?.trim() && !env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim()) return undefined;
  const named = env[`OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`]?.trim() ? `OTEL_EXPORTER_OTLP_${signal}_PROTOCOL` : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = env[named]?.trim() || 'http/protobuf';
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') throw new ConfigError(`${named}=${protocol}: mmif exports OTLP over http/protobuf or http/json only`);
  return { protocol };
}

let tracing: TracerSetup | undefined;
let tracer: Tracer | undefined;

/**
 * Starts exporting this process's spans when the environment names an OTLP endpoint, loading the SDK
 * then (telemetry/otlpSdk.ts); once per process. Resolves whether tracing is on.
 */
export async function startTracing(serviceName: string): Promise<boolean> {
  if (tracing) return true;
  const target = otlpTarget('TRACES');
  if (!target) return false;
  tracing = (await import('./otlpSdk.js')).registerTracer(serviceName, target.protocol);
  tracer = trace.getTracer('mmif');
  return true;
}

/** Sends the spans still buffered and stops exporting (a command's last step; a no-op when tracing is off). */
export async function stopTracing(): Promise<void> {
  const ending = tracing;
  tracing = undefined;
  tracer = undefined;
  await ending?.shutdown().catch((err: Error) => console.error(`traces: could not send the last spans: ${err.message}`));
}

/** The client interceptors that put the current trace context into the workflows a client starts (none when tracing is off). */
export function tracingClientInterceptors(): ClientInterceptors | undefined {
  return tracing ? { workflow: [new OpenTelemetryWorkflowClientInterceptor()] } : undefined;
}

/** The activity interceptors that continue a workflow's trace in its activities (none when tracing is off). */
export function tracingActivityInterceptors(): ActivityInterceptorsFactory[] {
  return tracing ? [tracing.activityInterceptors] : [];
}

/**
 * The sink the workflow interceptors (workflows/tracing.ts) hand their spans to. Always injected, so a
 * traced build on an untraced worker calls a sink that exists; it drops the spans when tracing is off.
 * Of the workflow's info, only its type and ids go into the spans' attributes (not its memo or search
 * attributes).
 */
export function tracingSinks(): InjectedSinks<OpenTelemetrySinks> {
  const setup = tracing;
  return { exporter: { export: { fn: (info, spans) => setup?.exportWorkflowSpans(info, spans) } } };
}

/** The stage a span runs in, for the model-call spans under it. */
const STAGE = createContextKey('mmif.stage');

/** The stage of the span running now (from `inSpan`), if any. */
export function currentStage(): string | undefined {
  return tracer && (context.active().getValue(STAGE) as string | undefined);
}

/**
 * Runs `run` in a span named `name` with the `attributes` made then (only when tracing), a child of the span running now; `ended`
 * adds attributes from its value, `failed` from its error (the span's status is then ERROR, with
 * no message: an error's text may quote a reply or a sample). With tracing off, runs `run` and nothing else.
 */
export async function inSpan<T>(
  name: string,
  attributes: () => Attributes,
  run: () => Promise<T>,
  ended: (value: T) => Attributes = () => ({}),
  failed: (err: unknown) => Attributes = () => ({}),
): Promise<T> {
  if (!tracer) return run();
  const given = attributes();
  const stage = given['mmif.stage'];
  const parent = typeof stage === 'string' && stage ? context.active().setValue(STAGE, stage) : context.active();
  return tracer.startActiveSpan(name, { attributes: given }, parent, async (span) => {
    try {
      const value = await run();
      span.setAttributes(ended(value));
      return value;
    } catch (err) {
      span.setAttributes(failed(err));
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw err;
    } finally {
      span.end();
    }
  });
}
