/**
 * The image's id on its content part, so a server that caches images by id skips hashing (and, with
 * early lookups, decoding) an image it already holds: vLLM reads a `uuid` beside `image_url` on a
 * content part and uses it as the item's cache key instead of its content hash (vllm-project/vllm
 * PR #23449; vllm/entrypoints/chat_utils.py `_parse_chat_message_content_part`; docs
 * features/multimodal_inputs.md "Cached Inputs"). SGLang's image part has no such field
 * (python/sglang/srt/entrypoints/openai/protocol.py ChatCompletionMessageContentImagePart: type,
 * image_url, modalities; pydantic drops unknown keys) and hashes the image content itself. OpenAI's
 * services never get the field. The id is the image's sha256, the key the image stage stores it
 * under; with a tenant salt (llm.imageIdSaltEnv) it is keyed by the salt (ADR 0065), because vLLM
 * trusts an id verbatim across tenants (vllm-project/vllm#55439).
 */
import { createHmac } from 'node:crypto';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { readSecret } from '../config/secrets.js';

/** The content-part field the id is sent in (vLLM's name). */
export const IMAGE_ID_FIELD = 'uuid';

/** What tells OpenAI's own services apart: an Azure deployment, or OpenAI's host. */
export interface ServiceTarget {
  baseURL: string;
  azure?: unknown;
}

/** OpenAI (api.openai.com) and Azure OpenAI (*.openai.azure.com, or any endpoint configured as Azure). */
export function isOpenAiService(target: ServiceTarget): boolean {
  if (target.azure !== undefined) return true;
  const host = URL.canParse(target.baseURL) ? new URL(target.baseURL).hostname.toLowerCase() : '';
  return host === 'api.openai.com' || host.endsWith('.openai.azure.com');
}

/**
 * The id of an image stored under `sha256`: the hash itself, or with a salt the hex HMAC-SHA256 of
 * the hash under the salt (the salt variable `saltEnv` is read as a secret; unset or empty: no salt).
 */
export function imageIdOf(sha256: string, saltEnv: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const salt = saltEnv === undefined ? undefined : readSecret(saltEnv, env);
  return salt === undefined ? sha256 : createHmac('sha256', salt).update(sha256).digest('hex');
}

/** The messages with `id` on every image part. */
export function withImageIds(messages: ChatCompletionMessageParam[], id: string): ChatCompletionMessageParam[] {
  return messages.map((m) =>
    Array.isArray(m.content) && m.content.some((part) => part.type === 'image_url')
      ? ({ ...m, content: m.content.map((part) => (part.type === 'image_url' ? { ...part, [IMAGE_ID_FIELD]: id } : part)) } as ChatCompletionMessageParam)
      : m,
  );
}

/**
 * The messages without image ids: a reply does not depend on them, so the reply cache's key (and the
 * simulator's reply draw) leaves them out.
 */
export function withoutImageIds<M extends { content?: unknown }>(messages: M[]): M[] {
  return messages.map((m) => (Array.isArray(m.content) && m.content.some(hasId) ? { ...m, content: m.content.map((part) => (hasId(part) ? dropId(part) : part)) } : m));
}

function hasId(part: unknown): part is Record<string, unknown> {
  return typeof part === 'object' && part !== null && IMAGE_ID_FIELD in part;
}

function dropId(part: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(part).filter(([key]) => key !== IMAGE_ID_FIELD));
}

/** The id an image part carries, if any. */
export function imageIdOfPart(part: object): string | undefined {
  const id = (part as Record<string, unknown>)[IMAGE_ID_FIELD];
  return typeof id === 'string' ? id : undefined;
}
