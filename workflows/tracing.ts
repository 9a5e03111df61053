/**
 * The workflow side of a build's trace: the Temporal SDK's OpenTelemetry workflow interceptors
 * (@temporalio/interceptors-opentelemetry), bundled with the workflows (worker/bundleProcess.ts) and
 * run only for a workflow started with trace context (its `_tracer-data` header, put there by a
 * traced client or a traced parent): a build started without tracing makes no span in the workflow
 * thread and sends none to the sink. Then the workflow's run, each activity and child it starts get
 * a span, and the context goes on to them in their headers, so activities and shard children continue
 * the trace. Headers are not part of the commands replay compares: tracing on or off replays the same.
 * Not imported by workflows/index.ts; the bundle loads it as an interceptor module.
 */
import { OpenTelemetryInboundInterceptor, OpenTelemetryInternalsInterceptor, OpenTelemetryOutboundInterceptor } from '@temporalio/interceptors-opentelemetry/lib/workflow/index.js';
import { TRACE_HEADER } from '@temporalio/interceptors-opentelemetry/lib/instrumentation.js';
import type { WorkflowInterceptors } from '@temporalio/workflow';

export const interceptors = (): WorkflowInterceptors => {
  let traced = false;
  const inbound = new OpenTelemetryInboundInterceptor();
  const outbound = new OpenTelemetryOutboundInterceptor();
  return {
    inbound: [
      {
        execute: (input, next) => {
          traced = TRACE_HEADER in input.headers;
          return traced ? inbound.execute(input, next) : next(input);
        },
        handleSignal: (input, next) => (traced ? inbound.handleSignal(input, next) : next(input)),
      },
    ],
    outbound: [
      {
        scheduleActivity: (input, next) => (traced ? outbound.scheduleActivity(input, next) : next(input)),
        scheduleLocalActivity: (input, next) => (traced ? outbound.scheduleLocalActivity(input, next) : next(input)),
        startChildWorkflowExecution: (input, next) => (traced ? outbound.startChildWorkflowExecution(input, next) : next(input)),
        continueAsNew: (input, next) => (traced ? outbound.continueAsNew(input, next) : next(input)),
        signalWorkflow: (input, next) => (traced ? outbound.signalWorkflow(input, next) : next(input)),
      },
    ],
    internals: [new OpenTelemetryInternalsInterceptor()],
  };
};
