/**
 * What a model call cost, in USD, and where the figure comes from (CostSource). The price table is
 * `@pydantic/genai-prices`' BUNDLED data only: the package fetches newer prices solely when a caller
 * installs an updater with its `updatePrices` (its README, "updatePrices"); nothing here does, so no
 * price is fetched at run time and a build is priced by the pinned version its report names. Token
 * counts follow OpenAI's usage object: cached prompt tokens are part of the prompt tokens, reasoning
 * tokens part of the completion tokens (https://platform.openai.com/docs/api-reference/chat/object),
 * as the table takes them (`input_tokens` includes `cache_read_tokens`: its README, "Cached input tokens").
 */
import { calcPrice } from '@pydantic/genai-prices';
import type { Usage } from './usage.js';

/** The price table this build is priced by: pinned in package.json (a unit test checks they agree). */
export const PRICE_TABLE = { package: '@pydantic/genai-prices', version: '0.1.8', published: '2026-09-23' } as const;

/**
 * The share taken off calls made through the Batch API when the build's config sets no other:
 * OpenAI's is half price ("50% lower costs", https://platform.openai.com/docs/guides/batch), and
 * the Batch API this engine speaks is OpenAI's /v1/batches.
 */
const BATCH_DISCOUNT = 0.5;

/** A per-model price from the build config (`llm.prices`): USD per million tokens. */
interface PriceOverride {
  inputPerMTok: number;
  outputPerMTok: number;
  /** Prompt tokens served from the provider's prompt cache; unset: the input price. */
  cachedInputPerMTok?: number;
  batchDiscount: number;
}

export type PriceOverrides = Readonly<Record<string, PriceOverride>>;

interface PricedCall extends Usage {
  model: string;
  /** Made through the Batch API: priced with its discount. */
  batch: boolean;
  /** The endpoint's base URL: tells the table which provider's price applies (api.openai.com, openrouter.ai, ...). */
  baseUrl?: string;
}

/**
 * - `provider`: the reply said what it was charged (OpenRouter's `usage.cost`,
 *   https://openrouter.ai/docs/use-cases/usage-accounting): that figure, as is;
 * - `config`: the build's own per-model price (`llm.prices`), for contracts, self-hosted models or a
 *   price the table lacks;
 * - `table`: PRICE_TABLE, which knows cached-input and reasoning prices per provider and model (and
 *   dated price changes). A call none of them prices is `unpriced`: its tokens are reported by name,
 *   never as $0.
 */
export type CostSource = 'provider' | 'config' | 'table';

type CallCost = { usd: number; source: CostSource } | { usd: undefined; source: 'unpriced' };

/**
 * The price of one call. Each call is priced by itself, as providers bill: tiered prices (e.g.
 * Anthropic's above 200k prompt tokens) depend on the one request's size.
 */
export function costOf(call: PricedCall, overrides: PriceOverrides = {}): CallCost {
  if (call.providerCostUsd !== undefined) return { usd: call.providerCostUsd, source: 'provider' };
  const cached = Math.min(call.cachedPromptTokens ?? 0, call.promptTokens);
  const discount = (d: number) => (call.batch ? 1 - d : 1);
  const override = overrideFor(call.model, overrides);
  if (override) {
    const input = (call.promptTokens - cached) * override.inputPerMTok + cached * (override.cachedInputPerMTok ?? override.inputPerMTok);
    return { usd: ((input + call.completionTokens * override.outputPerMTok) / 1e6) * discount(override.batchDiscount), source: 'config' };
  }
  const usd = tablePrice(call, cached);
  return usd === undefined ? { usd: undefined, source: 'unpriced' } : { usd: usd * discount(BATCH_DISCOUNT), source: 'table' };
}

/**
 * The config's price of a model: the exact name, else the longest entry it extends with `-`
 * (replies name dated snapshots: `gpt-4o-2024-08-06` takes the price set for `gpt-4o`).
 */
export function overrideFor(model: string, overrides: PriceOverrides): PriceOverride | undefined {
  const exact = overrides[model];
  if (exact) return exact;
  const base = Object.keys(overrides)
    .filter((name) => model.startsWith(`${name}-`))
    .sort((a, b) => b.length - a.length)[0];
  return base === undefined ? undefined : overrides[base];
}

/**
 * The table's price: the provider the endpoint's URL names first (OpenRouter's `openai/gpt-4o` is
 * priced as OpenRouter sells it), else the provider the model's name belongs to (a simulator or a
 * proxy on localhost serving `gpt-4o` is priced as OpenAI's gpt-4o: what the build would cost there).
 */
function tablePrice(call: PricedCall, cached: number): number | undefined {
  const usage = {
    input_tokens: call.promptTokens,
    cache_read_tokens: cached,
    output_tokens: call.completionTokens,
    output_reasoning_tokens: Math.min(call.reasoningTokens ?? 0, call.completionTokens),
  };
  const byUrl = call.baseUrl ? calcPrice(usage, call.model, { providerApiUrl: call.baseUrl }) : null;
  return (byUrl ?? calcPrice(usage, call.model))?.total_price;
}
