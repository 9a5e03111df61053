/**
 * One chat completion sent through the endpoint's worker-wide limiter (limiter.ts), attempted until
 * it succeeds, is refused, or runs out of attempts (retryPolicy.ts): 429s wait for the paused
 * endpoint, 5xx / connection errors / timeouts back off with jitter, and after the last attempt the
 * error fails the activity so Temporal retries it. Request refusals (400, 413, 422) become sample
 * rejections that name the endpoint; answers no retry can change (401, 403, 404, no quota) become
 * non-retryable EndpointErrors.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import type { ChatCompletion, ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import type { EndpointConfig, ModelRole } from '../config/modelsConfig.js';
import { REQUEST_KIND_HEADER, type PromptKind } from '../domain/promptKinds.js';
import { SampleRejection } from '../domain/rejection.js';
import { abortSignal } from './abortScope.js';
import { tallyFailedAttempt } from './tallyScope.js';
import { noteReply } from './replyProgress.js';
import { clientFor } from './endpoint.js';
import type { ResolvedEndpoint, ResolvedReplica } from './resolvedEndpoint.js';
import { describeFault, endpointNamed, faultOf, gaveUpLine, httpAnswer, maskedExcerpt, permanentError, refusingForNow } from './endpointError.js';
import { askedWaitMs } from './rateLimitHeaders.js';
import { chatCompletionOf, unusableOf, type UnusableReply } from './replyCheck.js';
import { limiterFor } from './limiter.js';
import type { EndpointLimiter, Ticket } from './endpointLimiter.js';
import { attemptWent, routeAttempt } from './replicaRoute.js';
import type { EndpointLimits } from './endpointLimits.js';
import { backoffMs, classifyFailure, type RetryPolicy } from './retryPolicy.js';
import type { RequestEstimate } from './tokenEstimate.js';
import { usableTotal } from './usage.js';
import { TransientError } from '../domain/errors.js';
import { ReplyCut } from './httpFetch.js';
import { causeCodes, innermostMessage } from '../domain/connectFailure.js';
import { causeChain } from '../domain/causeChain.js';
import { endpointHost, endpointLabel, recordAttempt, type RequestLabels } from '../telemetry/metrics.js';
import { currentStage, inSpan } from '../telemetry/tracing.js';

/** The endpoint refused the request itself (400, 413, 422): the sample is rejected, unless a dialect can answer the refusal (dialect.ts). */
export class RequestRefused extends SampleRejection {
  constructor(
    role: ModelRole,
    readonly refusal: APIError,
    endpoint: ResolvedEndpoint,
  ) {
    const fault = faultOf(refusal, endpoint);
    // A refusal is final at once: the same request would be refused again.
    super(`${role}: endpoint-refused: ${describeFault(fault)}`, { modelCall: { ...fault, tries: 1 } });
  }
}

interface Sending {
  role: ModelRole;
  /** What the request asks for: its `x-mmif-request-kind` header. */
  kind: PromptKind;
  /** The endpoint as configured (its key variable names the secret in messages) and as resolved. */
  config: EndpointConfig;
  endpoint: ResolvedEndpoint;
  /** The limits a request holds at one of the endpoint's replicas (each has its own, config/endpointReplicas.ts). */
  limitsOf: (replica: ResolvedReplica) => EndpointLimits;
  /** What picks the replica (replicaRoute.ts): the sample's image sha256, or for a request without an image its cache key. */
  routeKey: string;
  retry: RetryPolicy;
  timeoutMs: number;
  maxReplyBytes: number;
  /** Runs once, as the first attempt leaves the limiter's queue. */
  beforeFirstSend?: () => Promise<void>;
  /** The build the request is for, as its metrics name it (telemetry/metrics.ts). */
  build?: string;
}

/** The labels of a request's metrics (`role`: a model role, or `preflight`). */
export const requestLabels = (s: { build?: string; role: string; endpoint: ResolvedEndpoint }): RequestLabels => ({
  build: s.build ?? '',
  role: s.role,
  endpoint: endpointLabel(s.endpoint.baseURL),
  model: s.endpoint.model,
});

/** A completion and the replica of the endpoint that answered it (as an endpoint of its own, replicaRoute.ts). */
export interface Answered {
  completion: ChatCompletion;
  replica: ResolvedEndpoint;
}

/** `estimated`: the request's token estimate, made once when it was prepared (modelRequest.ts). */
export async function sendCompletion(s: Sending, body: ChatCompletionCreateParamsNonStreaming, estimated: RequestEstimate): Promise<Answered> {
  const estimate = estimated.promptTokens + estimated.replyTokens;
  const signal = abortSignal();
  // Whether an attempt may have reached the model without its reply reaching us (a timeout, a reset
  // connection): providers bill such requests, so a later execution counts them as lost in flight.
  let maybeBilled = false;
  let place: { limiter: EndpointLimiter; at: number } | undefined;
  for (let attempt = 1; ; attempt++) {
    // Each attempt goes where the router says now: a replica taken out since the last is not tried again.
    const at = { ...s, ...routeAttempt(s.endpoint, s.routeKey, s.limitsOf) };
    const limiter = limiterFor(at.endpoint, at.limits);
    // A retry at the same replica keeps its place in line; at another, it takes one there.
    if (place?.limiter !== limiter) place = { limiter, at: limiter.place() };
    const client = clientFor(at.endpoint, s.timeoutMs, s.maxReplyBytes);
    const labels = requestLabels(at);
    try {
      const completion = await limiter.run(
        estimate,
        async (ticket) => {
          signal?.throwIfAborted(); // aborted the moment it was admitted
          if (attempt === 1) await s.beforeFirstSend?.();
          return measured(labels, attempt, () => attemptCompletion(client, body, s.kind, estimate, ticket, signal));
        },
        place.at,
        at.limits,
        signal,
      );
      attemptWent(s.endpoint, at.endpoint);
      noteReply();
      return { completion, replica: at.endpoint };
    } catch (err) {
      // Cancelled: neither a fault of the endpoint nor worth another attempt.
      if (signal?.aborted) throw signal.reason;
      attemptWent(s.endpoint, at.endpoint, err);
      const kind = classifyFailure(err);
      tallyFailedAttempt(kind);
      if (kind === 'rate-limited') refuseLongAsk(err as APIError, at, attempt);
      if (kind === 'refused') throw new RequestRefused(s.role, err as APIError, at.endpoint);
      if (kind === 'unusable') throw unusableRejection(s.role, unusableOf(err)!, at.endpoint);
      if (kind === 'permanent') throw permanentError(err as APIError, at.endpoint, s.config.apiKeyEnv, s.role);
      if (kind === 'fatal') throw err;
      maybeBilled ||= mayHaveReachedModel(err);
      if (attempt >= s.retry.maxAttempts) throw lastAttemptError(err, { ...at, who: s.role }, attempt, maybeBilled);
      // A 429 needs no wait here: the limiter holds the endpoint until its Retry-After.
      if (kind === 'transient') await sleep(backoffMs(s.retry, attempt), undefined, { signal });
    }
  }
}

/**
 * One attempt, its duration, answer and failure class recorded in the metrics (telemetry/metrics.ts)
 * and, when tracing, as a span named and attributed after the GenAI semantic conventions
 * (https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans/) with the stage and role it ran for.
 */
export function measured<T>(labels: RequestLabels, attempt: number, send: () => Promise<T>): Promise<T> {
  return inSpan(
    `chat ${labels.model}`,
    () => {
      const stage = currentStage();
      return {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': labels.model,
        'server.address': endpointHost(labels.endpoint),
        'mmif.build': labels.build,
        // None for the pre-flight's calls, made before any stage.
        ...(stage ? { 'mmif.stage': stage } : {}),
        'mmif.role': labels.role,
        'mmif.attempt': attempt,
      };
    },
    () => recorded(labels, attempt, send),
    () => ({ 'mmif.outcome': 'ok' }),
    (err) => ({ 'mmif.outcome': 'failed', 'error.type': classifyFailure(err) }),
  );
}

async function recorded<T>(labels: RequestLabels, attempt: number, send: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const seconds = () => (performance.now() - started) / 1000;
  try {
    const value = await send();
    recordAttempt(labels, seconds(), attempt, 200);
    return value;
  } catch (err) {
    const kind = classifyFailure(err);
    // An unusable reply came with a 200; a connection failure with no status at all.
    recordAttempt(labels, seconds(), attempt, err instanceof APIError ? err.status : kind === 'unusable' ? 200 : undefined, kind);
    throw err;
  }
}

/** A 429 asking for a longer wait than the limits allow (llm.maxRetryAfterSeconds) fails the request at once. */
function refuseLongAsk(err: APIError, s: Pick<Sending, 'role' | 'endpoint'> & { limits: EndpointLimits }, attempts: number): void {
  const asked = askedWaitMs(err.headers);
  const bound = s.limits.maxWaitMs;
  if (asked !== undefined && bound !== undefined && asked > bound) throw new EndpointGaveUp(s.role, s.endpoint, refusingForNow(asked, bound), attempts, false);
}

/**
 * Tells the limiter how the attempt went (the response headers carry the provider's x-ratelimit-*
 * budgets), and reads the reply as a chat completion itself rather than trusting the SDK to: a 200
 * that is HTML, empty or of another shape is UnusableReply('not-a-completion') (replyCheck.ts).
 */
async function attemptCompletion(
  client: OpenAI,
  body: ChatCompletionCreateParamsNonStreaming,
  kind: PromptKind,
  estimate: number,
  ticket: Ticket,
  signal?: AbortSignal,
): Promise<ChatCompletion> {
  try {
    const { completion, headers } = await requestCompletion(client, body, kind, signal);
    // A count the endpoint got wrong (negative, a string, 1e300) leaves the estimate standing.
    ticket.succeeded(headers, usableTotal(completion.usage?.total_tokens, estimate));
    return completion;
  } catch (err) {
    if (classifyFailure(err) === 'rate-limited') ticket.rateLimited((err as APIError).headers);
    throw err;
  }
}

/**
 * One request, its reply read and checked as a chat completion (the pre-flight sends its request
 * through this too). It names its `kind` in the `x-mmif-request-kind` header: outside the body, so
 * outside every cache key; a server ignores a header it does not know (RFC 9110 §5.1), and the
 * simulator tells requests apart by it rather than by their wording.
 */
export async function requestCompletion(
  client: OpenAI,
  body: ChatCompletionCreateParamsNonStreaming,
  kind: PromptKind,
  signal?: AbortSignal,
): Promise<{ completion: ChatCompletion; headers: Headers }> {
  const response = await client.chat.completions.create(body, { headers: { [REQUEST_KIND_HEADER]: kind }, ...(signal ? { signal } : {}) }).asResponse();
  return { completion: chatCompletionOf(await response.text(), response.headers.get('content-type')), headers: response.headers };
}

/** A reply the endpoint sent that cannot be used: the sample is rejected, as a model call's fault, naming the endpoint. */
function unusableRejection(role: ModelRole, unusable: UnusableReply, endpoint: ResolvedEndpoint): SampleRejection {
  const detail = maskedExcerpt(unusable.detail, endpoint);
  // Not tried again: the same request gets the same reply (replyCheck.ts).
  const fault = { endpoint: endpoint.baseURL, model: endpoint.model, status: 200, excerpt: `${unusable.kind}: ${detail}`, tries: 1 };
  return new SampleRejection(`${role}: ${unusable.kind}: ${endpointNamed(fault.endpoint, fault.model)}: ${detail}`, { modelCall: fault });
}

/**
 * The error a transient or rate-limited failure leaves when no attempt is left: every kind names who
 * made the call (the model role, or a role's Batch API call), the endpoint, model and attempts.
 */
export function lastAttemptError(err: unknown, s: { who: string } & Pick<Sending, 'endpoint' | 'timeoutMs'>, attempts: number, maybeBilled = true): unknown {
  if (err instanceof APIConnectionTimeoutError) return new EndpointTimeout(s.who, s.endpoint, s.timeoutMs, attempts);
  const cut = causeOf(err, ReplyCut);
  if (cut) return new EndpointGaveUp(s.who, s.endpoint, maskedExcerpt(cut.message, s.endpoint), attempts, maybeBilled);
  if (err instanceof APIConnectionError) return new EndpointUnreachable(s.who, s.endpoint, err, attempts, maybeBilled);
  // A 5xx, a 408 or 409, or a 429 that never cleared: the SDK's own message ("500 Internal error") names no endpoint.
  if (err instanceof APIError) return new EndpointGaveUp(s.who, s.endpoint, httpAnswer(faultOf(err, s.endpoint)), attempts, maybeBilled);
  return err;
}

/**
 * A model call that failed on every attempt llm.retry allows. Transient: the activity fails and
 * Temporal retries it. Its message is gaveUpLine's (endpointError.ts), one shape for every kind.
 */
export class EndpointGaveUp extends TransientError {
  override name = 'EndpointGaveUp';
  constructor(
    who: string,
    endpoint: ResolvedEndpoint,
    what: string,
    attempts: number,
    /**
     * False when every attempt was answered with an error status or never left this machine: nothing
     * was billed, so the execution that sends the request again must not count it as lost in flight.
     */
    readonly maybeBilled = true,
  ) {
    super(gaveUpLine(who, endpoint, what, attempts));
  }
}

/**
 * Connection failures that happen before a byte of the request is sent (Node's common system errors,
 * https://nodejs.org/api/errors.html#common-system-errors, and getaddrinfo's EAI_AGAIN,
 * https://nodejs.org/api/dns.html#error-codes): the provider never saw the request.
 */
const BEFORE_SEND = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * Whether a failed attempt may have reached the model: an HTTP error status is an answer (not a billed
 * reply), and a connection refused or a host not found never sent the request; a timeout or a reset
 * connection may have been served and billed.
 */
function mayHaveReachedModel(err: unknown): boolean {
  if (err instanceof APIConnectionTimeoutError) return true;
  if (err instanceof APIConnectionError) return !causeCodes(err).some((code) => BEFORE_SEND.has(code));
  return !(err instanceof APIError && err.status !== undefined);
}

/** The first of an error's causes (itself included) of class `type`. */
function causeOf<T extends Error>(err: unknown, type: new (...args: never[]) => T): T | undefined {
  return causeChain(err).find((e): e is T => e instanceof type);
}

/**
 * No connection to the endpoint on any attempt (refused, reset, unknown host): the SDK's own
 * "Connection error." names nothing, and its cause ("connect ECONNREFUSED 127.0.0.1:9") names no
 * model or stage.
 */
export class EndpointUnreachable extends EndpointGaveUp {
  override name = 'EndpointUnreachable';
  constructor(who: string, endpoint: ResolvedEndpoint, err: APIConnectionError, attempts: number, maybeBilled = true) {
    super(who, endpoint, `cannot connect: ${maskedExcerpt(innermostMessage(err), endpoint)}`, attempts, maybeBilled);
  }
}

/** No whole reply within llm.timeoutMs, on every attempt: the SDK's own "Request timed out." names nothing. */
export class EndpointTimeout extends EndpointGaveUp {
  override name = 'EndpointTimeout';
  constructor(who: string, endpoint: ResolvedEndpoint, timeoutMs: number, attempts: number) {
    super(who, endpoint, `no complete reply within ${timeoutMs} ms (llm.timeoutMs)`, attempts);
  }
}
