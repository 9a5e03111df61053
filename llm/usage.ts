/**
 * The tokens a reply was billed for, read once from its `usage` object. Cost is priced from this
 * (pricing.ts); the reasoning and cached-prompt counts are parts of completion and prompt, not
 * additions to them, as OpenAI reports them:
 * https://platform.openai.com/docs/api-reference/chat/object (usage.prompt_tokens_details.cached_tokens,
 * usage.completion_tokens_details.reasoning_tokens). OpenRouter adds what it charged, `usage.cost`
 * in credits (USD): https://openrouter.ai/docs/use-cases/usage-accounting
 */
import type { CompletionUsage } from 'openai/resources/completions';

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  /** Of promptTokens, those served from the provider's prompt cache (billed at its cached-input price). */
  cachedPromptTokens?: number;
  /** Of completionTokens, those the model spent thinking (billed as output, never part of the answer). */
  reasoningTokens?: number;
  /** What the provider says it charged for the call (OpenRouter's usage.cost), when it says. */
  providerCostUsd?: number;
}

/** The provider's usage as a Usage; the optional counts only when the provider reports them above 0. */
export function usageOf(usage: CompletionUsage | undefined): Usage {
  const extra = usage as (CompletionUsage & { cost?: unknown }) | undefined;
  const cached = usage?.prompt_tokens_details?.cached_tokens ?? 0;
  const reasoning = usage?.completion_tokens_details?.reasoning_tokens ?? 0;
  const cost = typeof extra?.cost === 'number' && Number.isFinite(extra.cost) ? extra.cost : undefined;
  return {
    promptTokens: usage?.prompt_tokens ?? 0,
    completionTokens: usage?.completion_tokens ?? 0,
    ...(cached > 0 ? { cachedPromptTokens: cached } : {}),
    ...(reasoning > 0 ? { reasoningTokens: reasoning } : {}),
    ...(cost !== undefined ? { providerCostUsd: cost } : {}),
  };
}
