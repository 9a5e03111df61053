/**
 * The engine's own token counts, for a request before it is sent and for a reply whose endpoint
 * reported no usable count (usage.ts). Tokens a chat request will count against a tokens-per-minute
 * limit: providers charge the prompt plus max_tokens up front. ~4 characters per token; an image is
 * charged as OpenAI charges a 1024 px image (765 tokens at high or auto detail, 85 at low), the
 * largest the pipeline sends. The limiter replaces the estimate by `usage` once the reply is in.
 */
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';

const CHARS_PER_TOKEN = 4;
const IMAGE_TOKENS = { low: 85, high: 765, auto: 765 } as const;

export type EstimatedBody = Pick<ChatCompletionCreateParamsNonStreaming, 'messages' | 'max_tokens' | 'max_completion_tokens'>;

/** The prompt's tokens: its text at ~4 characters a token, and its images. */
export function estimatePromptTokens(body: Pick<EstimatedBody, 'messages'>): number {
  let chars = 0;
  let imageTokens = 0;
  for (const message of body.messages) {
    const content = 'content' in message ? message.content : undefined;
    if (typeof content === 'string') chars += content.length;
    else if (Array.isArray(content)) {
      for (const part of content) {
        if (part.type === 'text') chars += part.text.length;
        else if (part.type === 'image_url') imageTokens += IMAGE_TOKENS[part.image_url.detail ?? 'auto'];
      }
    }
  }
  return Math.ceil(chars / CHARS_PER_TOKEN) + imageTokens;
}

/** The most tokens a reply may take: the request's limit under either name. */
export function replyTokenLimit(body: Pick<EstimatedBody, 'max_tokens' | 'max_completion_tokens'>): number {
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

export function estimateRequestTokens(body: EstimatedBody): number {
  const { promptTokens, replyTokens } = requestEstimate(body);
  return promptTokens + replyTokens;
}
