/**
 * Pre-flight: before a build plans, one tiny request per distinct endpoint and model its stages
 * call — with an image when one of those stages sends images — so a refused key (401/403), an
 * unknown model (404), a spent quota or a text-only model fails the build in seconds with a message
 * naming the endpoint, model and status, instead of after planning and minutes of retries.
 *
 * A check that passed is remembered in the model-call cache (per endpoint, model, key and image
 * use; the key enters only as a hash), so re-runs, resumed and scheduled builds make no request for it.
 */
import { APIError } from 'openai';
import sharp from 'sharp';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { STAGES, type BuildConfig, type EndpointConfig, type Stage } from '../config/buildConfig.js';
import { endpointFor } from '../config/endpointRouting.js';
import { canonicalJson } from '../config/buildConfig.js';
import { sha256Hex } from '../domain/hashing.js';
import type { ObjectStore } from '../storage/objectStore.js';
import { clientFor, resolveEndpoint, type ResolvedEndpoint } from './endpoint.js';
import { EndpointError, faultOf, describeFault, permanentError } from './endpointError.js';
import { classifyFailure } from './retryPolicy.js';

/** Stages that send the sample's image (verifier selection and the compatibility pass are text only). */
const IMAGE_STAGES: ReadonlySet<Stage> = new Set(['instruction', 'constraints', 'answer', 'rejected', 'judge', 'richness']);

export interface PreflightTarget {
  endpoint: EndpointConfig;
  stages: Stage[];
  withImage: boolean;
}

/** The distinct endpoint + model + key variable of a config, and whether any of its stages sends images. */
export function preflightTargets(config: BuildConfig): PreflightTarget[] {
  const targets = new Map<string, PreflightTarget>();
  for (const stage of STAGES) {
    // The richness stage is called only when a source selects images by VLM tag count.
    if (stage === 'richness' && !config.sources.some((s) => s.richness?.scorer === 'vlm-tags')) continue;
    const endpoint = endpointFor(config, stage);
    const id = canonicalJson([endpoint.baseUrl ?? null, endpoint.model, endpoint.apiKeyEnv]);
    const target = targets.get(id) ?? { endpoint, stages: [], withImage: false };
    target.stages.push(stage);
    // Rejected answers of the no_image strategy go without the image; the others send it.
    const sendsImage = IMAGE_STAGES.has(stage) && !(stage === 'rejected' && config.dpo.strategies.every((s) => s === 'no_image'));
    target.withImage ||= sendsImage;
    targets.set(id, target);
  }
  return [...targets.values()];
}

export interface PreflightOutcome {
  endpoint: string;
  model: string;
  stages: Stage[];
  withImage: boolean;
  /** Names this check (endpoint, model, key hash, image use): one usage record per check. */
  checkId: string;
  /** Passed earlier (remembered in the cache): no request was made. */
  cached: boolean;
  /** Tokens of the request made now, for the build's cost figures. */
  usage?: { model: string; promptTokens: number; completionTokens: number };
  /**
   * Set when the endpoint could not be reached (connection errors, 5xx): that is no misconfiguration,
   * so the build goes on and its own calls retry; nothing is remembered.
   */
  unreachable?: string;
}

/** Attempts per endpoint for connection errors and 5xx before the pre-flight leaves it to the build. */
const TRANSIENT_ATTEMPTS = 3;

/** Checks every target; throws EndpointError when one is misconfigured (the build must not start). */
export async function preflight(
  config: BuildConfig,
  cache: ObjectStore,
  cachePrefix: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<PreflightOutcome[]> {
  const outcomes: PreflightOutcome[] = [];
  for (const target of preflightTargets(config)) {
    const endpoint = resolveEndpoint(target.endpoint, env);
    const checkId = sha256Hex(canonicalJson([endpoint.baseURL, endpoint.model, sha256Hex(endpoint.apiKey), target.withImage]));
    const marker = `${cachePrefix}/preflight/${checkId}.json`;
    const outcome = { endpoint: endpoint.baseURL, model: endpoint.model, stages: target.stages, withImage: target.withImage, checkId };
    if (await cache.exists(marker)) {
      outcomes.push({ ...outcome, cached: true });
      continue;
    }
    const result = await check(endpoint, target, config.llm.timeoutMs);
    if (typeof result === 'string') {
      outcomes.push({ ...outcome, cached: false, unreachable: result });
      continue;
    }
    await cache.put(marker, JSON.stringify({ ...outcome, checkedAt: new Date().toISOString() }), 'application/json');
    outcomes.push({ ...outcome, cached: false, ...(result ? { usage: result } : {}) });
  }
  return outcomes;
}

/**
 * The tokens of the answered request (undefined when rate limited: accepted, not answered), or why
 * the endpoint could not be reached.
 */
async function check(endpoint: ResolvedEndpoint, target: PreflightTarget, timeoutMs: number): Promise<PreflightOutcome['usage'] | string> {
  const client = clientFor(endpoint, timeoutMs);
  const body = await tinyRequest(endpoint.model, target.withImage);
  for (let attempt = 1; ; attempt++) {
    try {
      const reply = await client.chat.completions.create(body);
      return { model: reply.model || endpoint.model, promptTokens: reply.usage?.prompt_tokens ?? 0, completionTokens: reply.usage?.completion_tokens ?? 0 };
    } catch (err) {
      const kind = classifyFailure(err);
      // Rate limited: the key and model were accepted, which is all this checks.
      if (kind === 'rate-limited') return undefined;
      if (kind === 'permanent') throw permanentError(err as APIError, endpoint, target.endpoint.apiKeyEnv);
      if (kind === 'rejected') throw refused(err as APIError, endpoint, target);
      if (kind === 'fatal') throw err;
      if (attempt >= TRANSIENT_ATTEMPTS) return `model endpoint ${endpoint.baseURL} (model ${endpoint.model}) is unreachable: ${(err as Error).message}`;
      await sleep(500 * attempt);
    }
  }
}

/** A 400-class answer to a tiny request: with an image, most likely a model without image input. */
function refused(err: APIError, endpoint: ResolvedEndpoint, target: PreflightTarget): EndpointError {
  const fault = faultOf(err, endpoint);
  const hint = target.withImage
    ? ` — a one-line request with an image was refused: does the model accept image input? (images are sent by: ${target.stages.filter((s) => IMAGE_STAGES.has(s)).join(', ')})`
    : ' — a one-line text request was refused';
  return new EndpointError(`${describeFault(fault)}${hint}`, fault);
}

let tinyJpeg: Promise<Buffer> | undefined;

async function tinyRequest(model: string, withImage: boolean): Promise<ChatCompletionCreateParamsNonStreaming> {
  const text = 'Reply with the word OK.';
  if (!withImage) return { model, messages: [{ role: 'user', content: text }], max_tokens: 5 };
  tinyJpeg ??= sharp({ create: { width: 64, height: 64, channels: 3, background: { r: 120, g: 160, b: 200 } } }).jpeg().toBuffer();
  const url = `data:image/jpeg;base64,${(await tinyJpeg).toString('base64')}`;
  return {
    model,
    messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url, detail: 'low' } }, { type: 'text', text }] }],
    max_tokens: 5,
  };
}
