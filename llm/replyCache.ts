/**
 * Model replies in the object-store cache: what an entry holds and the key a request is filed
 * under. The key covers the endpoint, the full request and the prompt version, so the identical
 * request made again (a retried activity, a re-run build) is answered from here and never paid twice.
 */
import type { ChatCompletion, ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import type { BuildConfig } from '../config/buildConfig.js';
import { canonicalJson } from '../config/fingerprint.js';
import { sha256Hex } from '../domain/hashing.js';
import type { RenderedPrompt } from '../prompts/chat.js';
import { imageDataUrl, withoutImage, type MessageImage } from './chatMessages.js';
import { withoutImageIds } from './imageIds.js';
import { separateReasoning } from './reasoning.js';
import { usageOf, type Usage } from './usage.js';
import type { RequestEstimate } from './tokenEstimate.js';

export interface CachedReply extends Usage {
  /** The answer, without the model's thinking (reasoning.ts). */
  content: string;
  /**
   * Set when the model returned thinking with its answer. The thinking itself is never parsed,
   * verified or sent back, and is dropped here unless the build keeps it (training.keepReasoning):
   * the cache lives beside the dataset.
   */
  thought?: true;
  /** The thinking, stored only by a caller that keeps it. */
  reasoning?: string;
  finishReason: string;
  model: string;
  simulated: boolean;
  /** Made through the Batch API (priced with its discount). */
  batch: boolean;
  /** ModelCallerOptions.owner of the build that paid for it. */
  owner?: string;
  /** The stage execution that paid for it (`forExecution`): tells a lost attempt's calls from cache hits. */
  scope?: string;
  execution?: string;
}

/** What the simulator puts in `system_fingerprint` (simulator/replies.ts). */
const SIMULATOR_FINGERPRINT = 'mmif-simulator';

/** `request`: the estimate of the request the completion answers, which its reported usage is checked against (usage.ts). */
export function toCachedReply(completion: ChatCompletion, requestedModel: string, batch: boolean, request: RequestEstimate, keepReasoning = false): CachedReply {
  const choice = completion.choices[0];
  // Servers add the thinking as fields the SDK's types do not name (reasoning.ts).
  const { answer, reasoning } = separateReasoning(choice?.message.content ?? '', choice?.message as { reasoning_content?: unknown; reasoning?: unknown } | undefined);
  return {
    content: answer,
    ...(reasoning !== undefined ? { thought: true, ...(keepReasoning ? { reasoning } : {}) } : {}),
    finishReason: choice?.finish_reason ?? 'unknown',
    model: completion.model || requestedModel,
    ...usageOf(completion.usage, { request, replyText: `${choice?.message.content ?? ''}${reasoning ?? ''}` }),
    simulated: completion.system_fingerprint === SIMULATOR_FINGERPRINT,
    batch,
  };
}

interface KeyedRequest {
  prompt: RenderedPrompt;
  image?: MessageImage;
}

/**
 * Endpoint + model + full request + template version (+ the try); the image enters by its hash, not
 * its bytes, and its id for the server's caches (imageIds.ts) not at all: the reply does not depend on it. `replyTry` is absent for the first try, so first-try keys stay what they were before
 * tries existed.
 */
export function replyCacheKey(
  baseURL: string,
  params: ChatCompletionCreateParamsNonStreaming,
  req: KeyedRequest,
  detail: BuildConfig['llm']['imageDetail'],
  replyTry: number,
): string {
  const imageUrl = req.image ? imageDataUrl(req.image) : undefined;
  const material = canonicalJson({
    baseURL,
    promptVersion: req.prompt.version,
    imageSha256: req.image?.sha256,
    detail,
    ...(replyTry > 0 ? { replyTry } : {}),
    params: { ...params, messages: withoutImageIds(params.messages).map((m) => withoutImage(m, imageUrl)) },
  });
  const hash = sha256Hex(material);
  return `${hash.slice(0, 2)}/${hash}`;
}
