/**
 * Tokens a chat request will count against a tokens-per-minute limit, estimated before sending:
 * providers charge the prompt plus max_tokens up front. ~4 characters per token; an image is
 * charged as OpenAI charges a 1024 px image (765 tokens at high or auto detail, 85 at low), the
 * largest the pipeline sends. The limiter replaces the estimate by `usage` once the reply is in.
 */
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';

const CHARS_PER_TOKEN = 4;
const IMAGE_TOKENS = { low: 85, high: 765, auto: 765 } as const;

export function estimateRequestTokens(body: Pick<ChatCompletionCreateParamsNonStreaming, 'messages' | 'max_tokens'>): number {
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
  return Math.ceil(chars / CHARS_PER_TOKEN) + imageTokens + (body.max_tokens ?? 0);
}
