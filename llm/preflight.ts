/**
 * Pre-flight: before a build plans, one tiny request per distinct endpoint and model its stages call
 * (with an image when one of those stages sends images), so a refused key, an unknown model, a spent
 * quota, a text-only model, a refused connection, an unknown host or a TLS failure fails the build in
 * seconds naming endpoint, model and status (or what the connection met). The
 * request is built by the stages' own code in the endpoint's dialect, so a refusal a dialect answers
 * is learned here, and the reply must be a chat completion (replyCheck.ts). A check that passed is
 * remembered in the model-call cache (the key only as a hash), so re-runs make no request for it; its
 * requests are admitted by and counted in the build's budget like any other.
 */
import OpenAI, { APIError } from 'openai';
import type { ChatCompletion, ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import sharp from 'sharp';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { BuildConfig } from '../config/buildConfig.js';
import { MODEL_ROLES, type EndpointConfig, type ModelRole } from '../config/modelsConfig.js';
import { endpointFor } from '../config/endpointRouting.js';
import { canonicalJson } from '../config/fingerprint.js';
import { sha256Hex } from '../domain/hashing.js';
import type { ObjectStore } from '../storage/objectStore.js';
import { chatMessages, jsonSchemaOf } from './chatMessages.js';
import { describeLessons, requestBody, type Dialect, type StageAsk } from './dialect.js';
import { DialectMemory } from './dialectMemory.js';
import { imageIdOf } from './imageIds.js';
import { clientFor, resolveBaseUrl, resolveEndpoint } from './endpoint.js';
import type { ResolvedEndpoint } from './resolvedEndpoint.js';
import { EndpointError, faultOf, describeFault, endpointNamed, maskedExcerpt, permanentError, refusingForNow } from './endpointError.js';
import { askedWaitMs } from './rateLimitHeaders.js';
import { BudgetExhausted, type BuildBudget } from './buildBudget.js';
import { costOf } from './pricing.js';
import { unusableOf, type UnusableReply } from './replyCheck.js';
import { classifyFailure } from './retryPolicy.js';
import { measured, requestCompletion, requestLabels } from './sendCompletion.js';
import { recordPaidCall, type RequestLabels } from '../telemetry/metrics.js';
import { connectFailureOf, type ConnectFailure } from '../domain/connectFailure.js';
import { usageOf, type Usage } from './usage.js';
import { requestEstimate } from './tokenEstimate.js';
import { namesBaseUrl, replicaUrls } from '../config/endpointReplicas.js';

/** Model roles that send the sample's image (verifier selection and the compatibility pass are text only). */
const IMAGE_ROLES: ReadonlySet<ModelRole> = new Set(['instruction', 'constraints', 'answer', 'rejected', 'judge', 'richness']);

interface PreflightTarget {
  endpoint: EndpointConfig;
  roles: ModelRole[];
  withImage: boolean;
}

/** The distinct endpoint + model + key variable of a config, and whether any of its model roles sends images. */
export function preflightTargets(config: BuildConfig): PreflightTarget[] {
  const targets = new Map<string, PreflightTarget>();
  for (const role of MODEL_ROLES) {
    // The richness role is called only when a source selects images by VLM tag count.
    if (role === 'richness' && !config.sources.some((s) => s.richness?.scorer === 'vlm-tags')) continue;
    const endpoint = endpointFor(config, role);
    const id = canonicalJson([replicaUrls(endpoint), endpoint.model, endpoint.apiKeyEnv]);
    const target = targets.get(id) ?? { endpoint, roles: [], withImage: false };
    target.roles.push(role);
    // Rejected answers of the no_image strategy go without the image; the others send it.
    const sendsImage = IMAGE_ROLES.has(role) && !(role === 'rejected' && config.dpo.strategies.every((s) => s === 'no_image'));
    target.withImage ||= sendsImage;
    targets.set(id, target);
  }
  return [...targets.values()];
}

export interface PreflightOutcome {
  endpoint: string;
  model: string;
  /** The model roles this endpoint serves. `stages`, the name in recorded histories: this is an activity's result. */
  stages: ModelRole[];
  withImage: boolean;
  /** Names this check (endpoint, model, key hash, image use): one usage record per check. */
  checkId: string;
  /** Passed earlier (remembered in the cache): no request was made. */
  cached: boolean;
  /** Tokens of the request made now, for the build's cost figures. */
  usage?: Usage & { model: string };
  /** What the endpoint + model was found to accept beyond the plain request, one line each (dialect.ts). */
  lessons?: string[];
  /**
   * Set when the endpoint answered transiently on every attempt (5xx, a timeout, a reset connection,
   * a 429 asking for too long a wait): no misconfiguration, so the build goes on and its own calls
   * retry; nothing is remembered. A connection refused, an unknown host or a TLS failure throws.
   */
  unreachable?: string;
}

/** Attempts per endpoint for transient failures (5xx, timeouts, a temporary DNS failure) before the pre-flight leaves it to the build. */
const TRANSIENT_ATTEMPTS = 3;

/**
 * Checks every target (each replica of it); throws EndpointError when one is misconfigured (the build must not start),
 * BudgetExhausted when the build's budget (`budget`, when it has one) admits no request.
 */
export async function preflight(
  config: BuildConfig,
  cache: ObjectStore,
  cachePrefix: string,
  env: NodeJS.ProcessEnv = process.env,
  budget?: BuildBudget,
): Promise<PreflightOutcome[]> {
  const outcomes: PreflightOutcome[] = [];
  const dialects = new DialectMemory(cache, cachePrefix);
  // Each replica of an endpoint is checked on its own: any of them may serve any sample.
  const checks = preflightTargets(config).flatMap((target) => {
    const resolved = resolveEndpoint(target.endpoint, env);
    return resolved.replicas.map((replica) => ({ target, endpoint: { ...resolved, baseURL: replica.baseURL } }));
  });
  for (const { target, endpoint } of checks) {
    const checkId = sha256Hex(canonicalJson([endpoint.baseURL, endpoint.model, sha256Hex(endpoint.apiKey), target.withImage]));
    const marker = `${cachePrefix}/preflight/${checkId}.json`;
    const outcome = { endpoint: endpoint.baseURL, model: endpoint.model, stages: target.roles, withImage: target.withImage, checkId };
    if (await cache.exists(marker)) {
      outcomes.push({ ...outcome, cached: true, ...lessonsOf(await dialects.get(endpoint)) });
      continue;
    }
    const result = await check(endpoint, target, config.llm, dialects, budget, config.buildId);
    if (typeof result === 'string') {
      outcomes.push({ ...outcome, cached: false, unreachable: result });
      continue;
    }
    await cache.put(marker, JSON.stringify({ ...outcome, checkedAt: new Date().toISOString() }), 'application/json');
    outcomes.push({ ...outcome, cached: false, ...(result.usage ? { usage: result.usage } : {}), ...lessonsOf(result.dialect) });
  }
  return outcomes;
}

/** What each endpoint + model of a config was found to accept beyond the plain request (dialect.ts), for the build report. */
export async function endpointLessons(config: BuildConfig, cache: ObjectStore, cachePrefix: string): Promise<EndpointLessons[]> {
  const dialects = new DialectMemory(cache, cachePrefix);
  const found: EndpointLessons[] = [];
  for (const target of preflightTargets(config)) {
    const baseURL = resolveBaseUrl(target.endpoint);
    const lessons = lessonsOf(await dialects.get({ baseURL, model: target.endpoint.model })).lessons;
    if (lessons && !found.some((f) => f.endpoint === baseURL && f.model === target.endpoint.model)) found.push({ endpoint: baseURL, model: target.endpoint.model, lessons });
  }
  return found;
}

export interface EndpointLessons {
  endpoint: string;
  model: string;
  lessons: string[];
}

function lessonsOf(dialect: Dialect): Pick<PreflightOutcome, 'lessons'> {
  return dialect.lessons.length > 0 ? { lessons: describeLessons(dialect) } : {};
}

/**
 * Sends the tiny request in the endpoint's dialect, as the stages would (dialect.ts): a refusal the
 * dialect can answer is learned, remembered for the stages, and the request sent again. Returns the
 * tokens of the answered request (none when rate limited: accepted, not answered) and the dialect
 * it was answered in, or why the endpoint could not be reached.
 */
async function check(
  endpoint: ResolvedEndpoint,
  target: PreflightTarget,
  llm: BuildConfig['llm'],
  dialects: DialectMemory,
  budget: BuildBudget | undefined,
  build: string,
): Promise<{ usage?: PreflightOutcome['usage']; dialect: Dialect } | string> {
  const client = clientFor(endpoint, llm.timeoutMs, llm.maxReplyBytes);
  const labels = requestLabels({ build, role: 'preflight', endpoint });
  const send = (body: ChatCompletionCreateParamsNonStreaming) => paidCompletion(client, body, endpoint, llm, budget, labels);
  const ask = await tinyAsk(endpoint.model, target, llm);
  let dialect = await dialects.get(endpoint);
  for (let attempt = 1; ;) {
    const body = requestBody(ask, dialect);
    try {
      return { usage: await send(body), dialect };
    } catch (err) {
      const kind = classifyFailure(err);
      // Rate limited: the key and model were accepted, which is all this checks, unless it asks for
      // a longer wait than the build will give it: then it refuses for now, and says so.
      if (kind === 'rate-limited') {
        const asked = askedWaitMs((err as APIError).headers);
        const bound = llm.maxRetryAfterSeconds * 1000;
        return asked !== undefined && asked > bound ? `${endpointNamed(endpoint.baseURL, endpoint.model)}: ${refusingForNow(asked, bound)}` : { dialect };
      }
      if (kind === 'permanent') throw permanentError(err as APIError, endpoint, target.endpoint.apiKeyEnv, target.roles.join(', '));
      if (kind === 'unusable') throw notAnEndpoint(unusableOf(err)!, endpoint);
      if (kind === 'refused') {
        const refusal = err as APIError;
        const next = await dialects.afterRefusal(endpoint, dialect, refusal, body, faultOf(refusal, endpoint).excerpt);
        if (!next) throw refused(refusal, endpoint, target);
        dialect = next;
        continue;
      }
      if (kind === 'fatal') throw err;
      if (target.withImage && (err as APIError).status !== undefined) {
        const textBody = requestBody(await tinyAsk(endpoint.model, { ...target, withImage: false }, llm), dialect);
        if (await failsOnlyOnImages(send, textBody, body)) throw refused(err as APIError, endpoint, target);
      }
      const persisted = attempt >= TRANSIENT_ATTEMPTS;
      const connect = connectFailureOf(err, endpoint.baseURL, persisted);
      if (connect) throw unconnectable(connect, endpoint, target);
      if (persisted) return `model endpoint ${endpoint.baseURL} (model ${endpoint.model}) is unreachable: ${(err as Error).message}`;
      await sleep(500 * attempt++);
    }
  }
}

/**
 * After a server error (5xx) to the image request: whether the endpoint answers the same request
 * without the image and then fails the image request again, i.e. the image is what it fails on, as
 * a refusal no retry changes. llama.cpp's server started without a vision projector (`--mmproj`)
 * answers an image with HTTP 500 "image input is not supported - hint: if this is unexpected, you
 * may need to provide the mmproj": a std::runtime_error thrown by oaicompat_content_load_media
 * (llama.cpp tools/server/server-common.cpp), which ex_wrapper (tools/server/server.cpp) turns
 * into a 500 carrying that message.
 */
async function failsOnlyOnImages(
  send: (body: ChatCompletionCreateParamsNonStreaming) => Promise<unknown>,
  textBody: ChatCompletionCreateParamsNonStreaming,
  imageBody: ChatCompletionCreateParamsNonStreaming,
): Promise<boolean> {
  try {
    await send(textBody);
  } catch (err) {
    if (err instanceof BudgetExhausted) throw err;
    return false;
  }
  try {
    await send(imageBody);
    return false;
  } catch (err) {
    if (err instanceof BudgetExhausted) throw err;
    return classifyFailure(err) === 'transient' && (err as APIError).status !== undefined;
  }
}

/**
 * One pre-flight request, admitted by the build's budget and counted in it once answered, at its
 * price (pricing.ts, as every call); an error status or no answer is not billed (modelCaller.ts
 * settles its requests the same way).
 */
async function paidCompletion(
  client: OpenAI,
  body: ChatCompletionCreateParamsNonStreaming,
  endpoint: ResolvedEndpoint,
  llm: BuildConfig['llm'],
  budget: BuildBudget | undefined,
  labels: RequestLabels,
): Promise<Usage & { model: string }> {
  await budget?.admit();
  let completion: ChatCompletion;
  try {
    ({ completion } = await measured(labels, 1, () => requestCompletion(client, body, 'answer')));
  } catch (err) {
    budget?.unpaid();
    throw err;
  }
  const usage = usageAt(completion, body, endpoint);
  const cost = costOf({ ...usage, batch: false, baseUrl: endpoint.baseURL }, llm.prices);
  await budget?.paid(cost.usd ?? 0);
  recordPaidCall(labels, usage, cost.usd ?? 0, cost.usd === undefined);
  return usage;
}

const usageAt = (completion: ChatCompletion, body: ChatCompletionCreateParamsNonStreaming, endpoint: ResolvedEndpoint): Usage & { model: string } => ({
  model: completion.model || endpoint.model,
  ...usageOf(completion.usage, { request: requestEstimate(body), replyText: completion.choices[0]?.message.content ?? '' }),
});

/** A 400-class answer to a tiny request: with an image, most likely a model without image input. */
function refused(err: APIError, endpoint: ResolvedEndpoint, target: PreflightTarget): EndpointError {
  const fault = faultOf(err, endpoint);
  const hint = target.withImage
    ? ` — a one-line request with an image was refused: does the model accept image input? (images are sent by: ${target.roles.filter((s) => IMAGE_ROLES.has(s)).join(', ')})`
    : ' — a one-line text request was refused';
  return new EndpointError(`${describeFault(fault)}${hint}`, fault);
}

/**
 * No connection to the address the config names (refused, unknown host, TLS): a wrong baseUrl (or
 * OPENAI_BASE_URL when the role sets none) far more often than an outage, so the build does not start.
 */
function unconnectable(connect: ConnectFailure, endpoint: ResolvedEndpoint, target: PreflightTarget): EndpointError {
  const fault = { endpoint: endpoint.baseURL, model: endpoint.model, status: 0, excerpt: maskedExcerpt(connect.what, endpoint) };
  const where = namesBaseUrl(target.endpoint) ? 'the baseUrl these roles are given under models' : "the worker's OPENAI_BASE_URL (these roles set no baseUrl)";
  const certificate = connect.kind === 'tls' ? ', its scheme (https:// to a plain HTTP port fails so), or the certificate (a private CA goes in NODE_EXTRA_CA_CERTS)' : '';
  return new EndpointError(`${target.roles.join(', ')}: ${endpointNamed(fault.endpoint, fault.model)}: ${fault.excerpt} — check ${where}${certificate}`, fault);
}

/** A 200 that is no chat completion (a proxy's page, another API): the base URL is not a chat completions API. */
function notAnEndpoint(unusable: UnusableReply, endpoint: ResolvedEndpoint): EndpointError {
  const fault = { endpoint: endpoint.baseURL, model: endpoint.model, status: 200, excerpt: maskedExcerpt(`${unusable.kind}: ${unusable.detail}`, endpoint) };
  const hint = unusable.kind === 'not-a-completion' ? ' — is baseUrl an OpenAI-compatible API (…/v1), not a web page or a login proxy?' : '';
  return new EndpointError(`model endpoint ${fault.endpoint} (model ${fault.model}): ${fault.excerpt}${hint}`, fault);
}

/** Model roles whose reply is prose; the others ask for JSON, so the pre-flight asks with a reply schema too. */
const PROSE_ROLES: ReadonlySet<ModelRole> = new Set(['answer', 'rejected']);

const TINY_SCHEMA = { name: 'preflight', schema: jsonSchemaOf(z.object({ reply: z.string() })) };

let tinyJpeg: Promise<Buffer> | undefined;

/** What the tiny request asks, through the stages' own message and body code (chatMessages.ts, dialect.ts). */
async function tinyAsk(model: string, target: PreflightTarget, llm: BuildConfig['llm']): Promise<StageAsk> {
  const prompt = { kind: 'answer' as const, version: 'preflight', messages: [{ role: 'user' as const, text: 'Reply with the word OK.', withImage: target.withImage }] };
  tinyJpeg ??= sharp({ create: { width: 64, height: 64, channels: 3, background: { r: 120, g: 160, b: 200 } } })
    .jpeg()
    .toBuffer();
  const image = target.withImage ? { jpeg: await tinyJpeg, sha256: 'preflight' } : undefined;
  const asksJson = llm.structuredOutput && target.roles.some((s) => !PROSE_ROLES.has(s));
  return {
    model,
    messages: chatMessages(prompt, image, 'low'),
    temperature: llm.temperature,
    maxTokens: PREFLIGHT_MAX_TOKENS,
    ...(asksJson ? { schema: TINY_SCHEMA } : {}),
    ...(target.endpoint.reasoningEffort ? { reasoningEffort: target.endpoint.reasoningEffort } : {}),
    // Sent with its id as the stages send theirs, so a server refusing ids is learned here.
    ...(image ? { imageId: imageIdOf(sha256Hex(image.jpeg), llm.imageIdSaltEnv) } : {}),
  };
}

/** Enough for "OK" or a cut JSON object; a reasoning model may spend it all thinking, which is fine here. */
const PREFLIGHT_MAX_TOKENS = 16;
