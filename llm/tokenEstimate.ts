/**
 * The engine's own token counts, for a request before it is sent and for a reply whose endpoint
 * reported no usable count (usage.ts). Tokens a chat request will count against a tokens-per-minute
 * limit: providers charge the prompt plus max_tokens up front. ~4 characters per token; an image by
 * its model family's documented rule for its size and detail (imageTokens.ts). The limiter replaces
 * the estimate by `usage` once the reply is in.
 */
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { imageUrlTokens } from './imageTokens.js';

const CHARS_PER_TOKEN = 4;

type EstimatedBody = Pick<ChatCompletionCreateParamsNonStreaming, 'model' | 'messages' | 'max_tokens' | 'max_completion_tokens'>;

/** The prompt's tokens: its text at ~4 characters a token, and its images as the model counts them. */
export function estimatePromptTokens(body: Pick<EstimatedBody, 'model' | 'messages'>): number {
  let chars = 0;
  let imageTokens = 0;
  for (const message of body.messages) {
    const content = 'content' in message ? message.content : undefined;
    if (typeof content === 'string') chars += content.length;
    else if (Array.isArray(content)) {
      for (const part of content) {
        if (part.type === 'text') chars += part.text.length;
        else if (part.type === 'image_url') imageTokens += imageUrlTokens(body.model, part.image_url.url, part.image_url.detail);
      }
    }
  }
  return Math.ceil(chars / CHARS_PER_TOKEN) + imageTokens;
}

/** The most tokens a reply may take: the request's limit under either name. */
function replyTokenLimit(body: Pick<EstimatedBody, 'max_tokens' | 'max_completion_tokens'>): number {
  return body.max_completion_tokens ?? body.max_tokens ?? 0;
}

/** The tokens of a reply's text (answer and thinking). */
export function estimateTextTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

/** What a request could use at most, as estimated before it is sent: its prompt and its reply's token limit. */
export interface RequestEstimate {
  promptTokens: number;
  replyTokens: number;
}

export function requestEstimate(body: EstimatedBody): RequestEstimate {
  return { promptTokens: estimatePromptTokens(body), replyTokens: replyTokenLimit(body) };
}
