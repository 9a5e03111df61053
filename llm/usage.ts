/**
 * The tokens a reply was billed for, read once from its `usage` object and checked on arrival. The
 * reasoning and cached-prompt counts are parts of completion and prompt, as OpenAI reports them
 * (https://platform.openai.com/docs/api-reference/chat/object); OpenRouter adds what it charged,
 * `usage.cost` in USD (https://openrouter.ai/docs/use-cases/usage-accounting). A count that is
 * missing, not a finite non-negative integer, or beyond what the request could have used is replaced
 * by the engine's estimate (tokenEstimate.ts) and the usage marked `estimated` with the reason.
 */
import { estimateTextTokens, type RequestEstimate } from './tokenEstimate.js';

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  /** Of promptTokens, those served from the provider's prompt cache (billed at its cached-input price). */
  cachedPromptTokens?: number;
  /** Of completionTokens, those the model spent thinking (billed as output, never part of the answer). */
  reasoningTokens?: number;
  /** What the provider says it charged for the call (OpenRouter's usage.cost), when it says. */
  providerCostUsd?: number;
  /** Why the endpoint's counts were not used: the counts are then the engine's estimate (tokenEstimate.ts). */
  estimated?: string;
}

/** The request a reply answers and the reply's text: what the endpoint's counts are checked against and estimated from. */
interface UsageContext {
  /** The request's estimate (tokenEstimate.ts requestEstimate). */
  request: RequestEstimate;
  /** The reply's answer and thinking, as received. */
  replyText: string;
}

/**
 * A count beyond this many times what the request could use (plus SLACK_TOKENS) is absurd: the
 * margin covers tokenizers that count several tokens a character (the estimate takes 4 characters a
 * token) and images billed above the estimate's 765 tokens.
 */
const MARGIN = 8;
const SLACK_TOKENS = 4096;

/** The provider's usage as a Usage; the optional counts only when the provider reports them above 0. */
export function usageOf(usage: unknown, context: UsageContext): Usage {
  const raw = (typeof usage === 'object' && usage !== null ? usage : {}) as Record<string, unknown>;
  const details = (name: string) => (typeof raw[name] === 'object' && raw[name] !== null ? (raw[name] as Record<string, unknown>) : {});
  const promptBound = context.request.promptTokens;
  const replyBound = Math.max(context.request.replyTokens, estimateTextTokens(context.replyText));
  const problems: string[] = [];
  const count = (name: string, value: unknown, bound: number, optional: boolean): number | undefined => {
    const problem = countProblem(value, (bound + SLACK_TOKENS) * MARGIN, optional);
    if (problem) problems.push(`${name} ${problem}`);
    return problem ? undefined : (value as number | undefined);
  };
  if (typeof usage !== 'object' || usage === null) {
    return { promptTokens: promptBound, completionTokens: estimateTextTokens(context.replyText), estimated: 'no usage reported' };
  }
  const prompt = count('prompt_tokens', raw.prompt_tokens, promptBound, false) ?? promptBound;
  const completion = count('completion_tokens', raw.completion_tokens, replyBound, false) ?? estimateTextTokens(context.replyText);
  const cached = Math.min(count('cached_tokens', details('prompt_tokens_details').cached_tokens, promptBound, true) ?? 0, prompt);
  const reasoning = Math.min(count('reasoning_tokens', details('completion_tokens_details').reasoning_tokens, replyBound, true) ?? 0, completion);
  const cost = raw.cost;
  const costKnown = cost !== undefined && cost !== null;
  const costUsable = typeof cost === 'number' && Number.isFinite(cost) && cost >= 0;
  if (costKnown && !costUsable) problems.push(`cost ${described(cost)}`);
  return {
    promptTokens: prompt,
    completionTokens: completion,
    ...(cached > 0 ? { cachedPromptTokens: cached } : {}),
    ...(reasoning > 0 ? { reasoningTokens: reasoning } : {}),
    ...(costUsable ? { providerCostUsd: cost } : {}),
    ...(problems.length > 0 ? { estimated: [...new Set(problems)].join('; ') } : {}),
  };
}

/** A reply's reported total tokens when usable against the request's `estimatedTokens`, else undefined (the limiter keeps its estimate). */
export function usableTotal(total: unknown, estimatedTokens: number): number | undefined {
  return countProblem(total, (estimatedTokens + SLACK_TOKENS) * MARGIN, false) === undefined ? (total as number) : undefined;
}

/** What is wrong with a reported count, or undefined when it is a usable one. */
function countProblem(value: unknown, absurdAbove: number, optional: boolean): string | undefined {
  if (value === undefined || value === null) return optional ? undefined : 'missing';
  if (typeof value !== 'number') return `not a number (${described(value)})`;
  if (!Number.isFinite(value)) return `not finite (${value})`;
  if (value < 0) return `negative (${value})`;
  if (!Number.isInteger(value)) return `not an integer (${value})`;
  if (value > absurdAbove) return `beyond what the request could use (${value} > ${absurdAbove})`;
  return undefined;
}

const described = (value: unknown): string => (typeof value === 'string' ? JSON.stringify(value.slice(0, 40)) : String(value));
