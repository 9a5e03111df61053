/**
 * The engine's own metrics, one definition each, and the one function per event that records them:
 * the call sites (model calls, stage runs, commits) say what happened, this module says under which
 * name and labels. Names follow the OpenTelemetry GenAI semantic conventions where one applies
 * (https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-metrics/, written the way OpenTelemetry's
 * Prometheus exporters spell them: dots to underscores, the unit as suffix), `mmif_*` otherwise.
 * Labels are bounded: build, source, stage, role, endpoint, model and fixed enumerations (outcome,
 * reason code, status class, token type); never a sample id, a prompt, a key or a URL's query.
 * Nothing is recorded until `enableMetrics` (the metrics server starts it): a worker without
 * MMIF_METRICS_ADDR pays nothing. Worker side only: workflow code never records (WORKFLOW_BOUNDARY).
 * prom-client rather than the SDK's meter or OpenTelemetry's: docs/adr/0048-engine-metrics-with-prom-client.md.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

export const registry = new Registry();
let enabled = false;
const samplers: Array<() => void> = [];

/** Starts recording (the metrics server calls it); before, every record function returns at once. */
export function enableMetrics(): void {
  enabled = true;
}

/** Runs `sample` before each scrape, to set gauges from state the engine keeps anyway (lanes, limiters). */
export function sampleOnScrape(sample: () => void): void {
  samplers.push(sample);
}

/** The exposition text of every engine metric, gauges sampled now. */
export async function scrapeEngineMetrics(): Promise<string> {
  for (const sample of samplers) sample();
  return registry.metrics();
}

/** A metric as prom-client reads it out (`type` is the lower-case name at run time, whatever its typings say). */
export interface MetricFamily {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary';
  /** One per label set; a histogram's are its `_bucket` (with `le`), `_sum` and `_count` series (metricName). */
  values: Array<{ value: number; labels: Record<string, string | number | undefined>; metricName?: string }>;
}

/** Every engine metric as data, gauges sampled now (for an OTLP export: telemetry/otlpMetrics.ts). */
export async function engineMetricsJson(): Promise<MetricFamily[]> {
  for (const sample of samplers) sample();
  return (await registry.getMetricsAsJSON()) as unknown as MetricFamily[];
}

/** The semantic conventions' advised bucket boundaries for gen_ai.client.operation.duration (seconds) and gen_ai.client.token.usage. */
const DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];

/** Who made a model request: the build, the model role, and the endpoint (base URL without credentials or query) and model. */
export interface RequestLabels {
  build: string;
  role: string;
  endpoint: string;
  model: string;
}

const GEN_AI = ['build', 'role', 'gen_ai_operation_name', 'gen_ai_provider_name', 'gen_ai_request_model', 'server_address'] as const;
const REQUEST = ['build', 'role', 'endpoint', 'model'] as const;

const operationDuration = new Histogram({
  name: 'gen_ai_client_operation_duration_seconds',
  help: 'Duration of each chat completion attempt, answered or failed (error_type), in seconds',
  labelNames: [...GEN_AI, 'error_type'],
  buckets: DURATION_BUCKETS,
  registers: [registry],
});
const tokenUsage = new Histogram({
  name: 'gen_ai_client_token_usage',
  help: 'Tokens of each paid chat completion by gen_ai_token_type: input, output, and the cached (of input) and reasoning (of output) parts',
  labelNames: [...GEN_AI, 'gen_ai_token_type'],
  buckets: TOKEN_BUCKETS,
  registers: [registry],
});
const requests = new Counter({
  name: 'mmif_requests_total',
  help: 'Chat completion attempts by the HTTP status class of their answer (2xx, 4xx, 5xx; "network" when none came)',
  labelNames: [...REQUEST, 'status_class'],
  registers: [registry],
});
const requestErrors = new Counter({
  name: 'mmif_request_errors_total',
  help: 'Failed chat completion attempts by class (rate-limited, transient, refused, unusable, permanent, fatal), as mmif status shows them',
  labelNames: [...REQUEST, 'class'],
  registers: [registry],
});
const rateLimited = new Counter({ name: 'mmif_rate_limited_total', help: 'Attempts answered 429', labelNames: REQUEST, registers: [registry] });
const retries = new Counter({ name: 'mmif_request_retries_total', help: 'Attempts after the first of a request', labelNames: REQUEST, registers: [registry] });
const costUsd = new Counter({ name: 'mmif_cost_usd_total', help: 'USD paid for model calls (cache hits pay nothing)', labelNames: REQUEST, registers: [registry] });
const unpricedTokens = new Counter({
  name: 'mmif_unpriced_tokens_total',
  help: 'Tokens of paid calls to models no price is known for (counted in no USD figure)',
  labelNames: [...REQUEST, 'gen_ai_token_type'],
  registers: [registry],
});
const samples = new Counter({
  name: 'mmif_samples_total',
  help: 'Samples through a stage in this worker, by outcome (ok, rejected)',
  labelNames: ['build', 'source', 'stage', 'outcome'],
  registers: [registry],
});
const rejections = new Counter({
  name: 'mmif_rejections_total',
  help: 'Samples a stage rejected, by reason code',
  labelNames: ['build', 'source', 'stage', 'reason'],
  registers: [registry],
});
const accepted = new Counter({ name: 'mmif_records_accepted_total', help: 'SFT records in committed shards', labelNames: ['build'], registers: [registry] });
const pairs = new Counter({ name: 'mmif_dpo_pairs_total', help: 'DPO pairs in committed shards', labelNames: ['build'], registers: [registry] });
const shardCommits = new Counter({ name: 'mmif_shard_commits_total', help: 'Shard commits (a re-commit counts again)', labelNames: ['build'], registers: [registry] });
const commitDuration = new Histogram({
  name: 'mmif_shard_commit_duration_seconds',
  help: 'Time to write and commit a shard',
  labelNames: ['build'],
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
  registers: [registry],
});
const bytesWritten = new Counter({ name: 'mmif_bytes_written_total', help: 'Bytes of dataset files committed', labelNames: ['build'], registers: [registry] });
const leaseGrants = new Counter({
  name: 'mmif_lease_grants_total',
  help: "Concurrency grants this worker took from the task queue's lease desk",
  labelNames: ['endpoint', 'model'],
  registers: [registry],
});
const budgetSpent = new Gauge({ name: 'mmif_budget_spent_usd', help: "USD the build has spent, as this worker's ledger knows it", labelNames: ['build'], registers: [registry] });
const budgetLeft = new Gauge({ name: 'mmif_budget_left_usd', help: "USD left of the build's llm.budget.maxUsd", labelNames: ['build'], registers: [registry] });

/** Sampled on scrape (sampleOnScrape): reset first, so an endpoint or build gone from the worker leaves no stale series. */
export const inFlight = new Gauge({ name: 'mmif_requests_in_flight', help: 'Requests in flight from this worker', labelNames: ['endpoint', 'model'], registers: [registry] });
export const limitInUse = new Gauge({
  name: 'mmif_endpoint_limit_in_use_ratio',
  help: "Share of this worker's concurrency limit (its lease, or its 1/N split) of the endpoint in use",
  labelNames: ['endpoint', 'model'],
  registers: [registry],
});
export const lanesBusy = new Gauge({ name: 'mmif_lanes_busy', help: "Sample lanes holding a sample, this worker's for the build", labelNames: ['build'], registers: [registry] });
export const lanesWaiting = new Gauge({ name: 'mmif_lanes_waiting', help: 'Samples waiting for a lane in this worker', labelNames: ['build'], registers: [registry] });

/**
 * An endpoint as a label: its base URL without credentials, query or fragment (a key someone put in the
 * URL stays out of the metrics).
 */
export function endpointLabel(baseURL: string): string {
  return parsedEndpoint(baseURL).label;
}

/** An endpoint's host name (server.address in the GenAI conventions). */
export function endpointHost(baseURL: string): string {
  return parsedEndpoint(baseURL).host;
}

/** Each base URL parsed once: a request's labels are made for every attempt, and URL parsing is most of their cost. */
const parsed = new Map<string, { label: string; host: string }>();
function parsedEndpoint(url: string): { label: string; host: string } {
  let found = parsed.get(url);
  if (!found) {
    try {
      const u = new URL(url);
      found = { label: `${u.protocol}//${u.host}${u.pathname.replace(/\/$/, '')}`, host: u.hostname };
    } catch {
      found = { label: 'unparsable', host: 'unknown' };
    }
    parsed.set(url, found);
  }
  return found;
}

function genAi(r: RequestLabels) {
  const host = endpointHost(r.endpoint);
  return { build: r.build, role: r.role, gen_ai_operation_name: 'chat', gen_ai_provider_name: 'openai', gen_ai_request_model: r.model, server_address: host };
}

/**
 * One attempt of a chat completion ended: `status` is the HTTP status of its answer (undefined: none
 * came), `failure` its class when it failed (llm/retryPolicy.ts), `attempt` its number (1 = first).
 */
export function recordAttempt(r: RequestLabels, seconds: number, attempt: number, status: number | undefined, failure?: string): void {
  if (!enabled) return;
  operationDuration.observe({ ...genAi(r), error_type: failure ?? '' }, seconds);
  requests.inc({ ...r, status_class: status === undefined ? 'network' : `${Math.floor(status / 100)}xx` });
  if (failure) requestErrors.inc({ ...r, class: failure });
  if (status === 429) rateLimited.inc(r);
  if (attempt > 1) retries.inc(r);
}

interface PaidTokens {
  promptTokens: number;
  completionTokens: number;
  cachedPromptTokens?: number;
  reasoningTokens?: number;
}

/** A paid call: its tokens by type, and its cost (`unpriced`: no price known, its tokens counted apart). */
export function recordPaidCall(r: RequestLabels, tokens: PaidTokens, usd: number, unpriced: boolean): void {
  if (!enabled) return;
  const byType: Array<[string, number | undefined]> = [
    ['input', tokens.promptTokens],
    ['output', tokens.completionTokens],
    ['cached', tokens.cachedPromptTokens],
    ['reasoning', tokens.reasoningTokens],
  ];
  for (const [type, n] of byType) {
    if (n === undefined) continue;
    tokenUsage.observe({ ...genAi(r), gen_ai_token_type: type }, n);
    if (unpriced && (type === 'input' || type === 'output')) unpricedTokens.inc({ ...r, gen_ai_token_type: type }, n);
  }
  costUsd.inc(r, usd);
}

/** What a build has spent and, with a USD budget, has left. */
export function recordBudget(build: string, spentUsd: number, maxUsd: number | undefined): void {
  if (!enabled) return;
  budgetSpent.set({ build }, spentUsd);
  if (maxUsd !== undefined) budgetLeft.set({ build }, Math.max(0, maxUsd - spentUsd));
}

/** A stage decided a sample's outcome in this worker (`reason`: the rejection's code; one that is not a short code counts as `other`). */
export function recordSample(build: string, source: string, stage: string, outcome: 'ok' | 'rejected', reason?: string): void {
  if (!enabled) return;
  samples.inc({ build, source, stage, outcome });
  if (reason !== undefined) rejections.inc({ build, source, stage, reason: /^[a-z0-9-]{1,40}$/.test(reason) ? reason : 'other' });
}

/** A shard committed: the records and pairs it added (a re-commit: the change), its files' bytes and how long the commit took. */
export function recordCommit(build: string, added: { instruct: number; dpo: number }, bytes: number, seconds: number): void {
  if (!enabled) return;
  shardCommits.inc({ build });
  accepted.inc({ build }, Math.max(0, added.instruct));
  pairs.inc({ build }, Math.max(0, added.dpo));
  bytesWritten.inc({ build }, bytes);
  commitDuration.observe({ build }, seconds);
}

/** The lease desk granted this worker a share of an endpoint's concurrency. */
export function recordLeaseGrant(labels: { endpoint: string; model: string }): void {
  if (!enabled) return;
  leaseGrants.inc(labels);
}
