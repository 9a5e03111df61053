/**
 * A provider-side prompt (prefix) cache, so the simulator reports `usage.prompt_tokens_details.cached_tokens`
 * as OpenAI does (https://platform.openai.com/docs/api-reference/chat/object): the tokens of the
 * longest prompt prefix computed before, for the same model, in the simulator's own token count
 * (replies.ts promptTokens). Only block boundaries are remembered (a chained hash of the prompt up to
 * each), which is all a hit can be rounded to; the memory is dropped whole past `maxEntries`, as a
 * provider's cache is evicted.
 */
import { createHash } from 'node:crypto';
import { imagePartTokens, type ChatRequest } from './replies.js';
import { imageIdOfPart } from '../llm/imageIds.js';

export interface PromptCacheSettings {
  /** Prompts shorter than this are not cached (OpenAI: 1024). */
  minTokens: number;
  /** Hits are whole blocks of this many tokens (OpenAI: 128; vLLM's default block: 16). */
  blockTokens: number;
}

export const PROMPT_CACHE_PRESETS = {
  /**
   * OpenAI's automatic prompt caching (https://platform.openai.com/docs/guides/prompt-caching): "enabled
   * for prompts that are 1024 tokens or longer", hits "in increments of 128 tokens".
   */
  openai: { minTokens: 1024, blockTokens: 128 },
  /**
   * vLLM's automatic prefix caching (https://docs.vllm.ai/en/latest/design/prefix_caching.html): the KV
   * cache in blocks (16 tokens by default, `--block-size`), a block reused when it and every block before
   * it hash alike; no minimum. SGLang's RadixAttention reuses any shared prefix the same way.
   */
  vllm: { minTokens: 0, blockTokens: 16 },
} as const satisfies Record<string, PromptCacheSettings>;

const CHARS_PER_TOKEN = 4;

export class PromptCache {
  private readonly seen = new Set<string>();

  constructor(
    private readonly settings: PromptCacheSettings,
    /** Tokens every image part counts for, if set; else its model's rule (replies.ts imagePartTokens). */
    private readonly imageTokens: number | undefined,
    private readonly maxEntries = 1_000_000,
  ) {}

  /** The cached tokens of this request's prompt (at most `promptTokens`); then its prefixes are remembered. */
  lookup(request: ChatRequest, promptTokens: number): number {
    if (promptTokens < this.settings.minTokens) return 0;
    const boundaries = this.blockBoundaries(request);
    let cached = 0;
    for (const { tokens, key } of boundaries) {
      if (!this.seen.has(key)) break;
      cached = tokens;
    }
    if (this.seen.size + boundaries.length > this.maxEntries) this.seen.clear();
    for (const { key } of boundaries) this.seen.add(key);
    return Math.min(cached, promptTokens);
  }

  /** The chained hash of the prompt at every whole block: model, then each message's role and parts in order. */
  private blockBoundaries(request: ChatRequest): Array<{ tokens: number; key: string }> {
    const hash = createHash('sha256').update(request.model);
    const boundaries: Array<{ tokens: number; key: string }> = [];
    let tokens = 0;
    let nextBlock = this.settings.blockTokens;
    const advance = (unit: string, weight: number) => {
      hash.update(unit);
      tokens += weight;
      while (tokens >= nextBlock) {
        boundaries.push({ tokens: nextBlock, key: hash.copy().digest('base64') });
        nextBlock += this.settings.blockTokens;
      }
    };
    for (const message of request.messages) {
      advance(`\u0000${message.role}\u0000`, 0);
      const parts = typeof message.content === 'string' ? [{ type: 'text' as const, text: message.content }] : (message.content ?? []);
      for (const part of parts) {
        if (part.type === 'image_url') {
          const image = part as Parameters<typeof imagePartTokens>[1];
          // An image enters the block hash by the id the request gives it, else by its bytes, as vLLM's
          // multimodal hash does (llm/imageIds.ts).
          advance(`\u0001${imageIdOfPart(image) ?? image.image_url.url}`, imagePartTokens(request.model, image, this.imageTokens));
        } else if (part.type === 'text') {
          const text = (part as { text: string }).text;
          for (let i = 0; i < text.length; i += CHARS_PER_TOKEN) advance(text.slice(i, i + CHARS_PER_TOKEN), 1);
        }
      }
    }
    return boundaries;
  }
}
