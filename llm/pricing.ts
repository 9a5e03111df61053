/**
 * What model calls cost. Prices are USD per million tokens; `batchDiscount` is the share taken off
 * for calls made through the Batch API (OpenAI: half price).
 *
 * DEFAULT_PRICES are OpenAI's published standard-tier list prices as of PRICES_AS_OF, rounded as
 * published. They are approximate and go stale: check the provider's pricing page and override
 * them per model in the build config. Cached-input discounts are not modelled. A model missing from
 * the table (a local vLLM, the simulator) costs 0.
 */
export interface ModelPrice {
  inputPerMTok: number;
  outputPerMTok: number;
  batchDiscount: number;
}

export type PriceTable = Readonly<Record<string, ModelPrice>>;

export const PRICES_AS_OF = '2025-06';

const openai = (inputPerMTok: number, outputPerMTok: number): ModelPrice => ({ inputPerMTok, outputPerMTok, batchDiscount: 0.5 });

export const DEFAULT_PRICES: PriceTable = {
  'gpt-4o': openai(2.5, 10),
  'gpt-4o-mini': openai(0.15, 0.6),
  'gpt-4.1': openai(2, 8),
  'gpt-4.1-mini': openai(0.4, 1.6),
  'gpt-4.1-nano': openai(0.1, 0.4),
  'o4-mini': openai(1.1, 4.4),
};

/**
 * The exact model, else the longest table entry it extends with `-`: replies name dated snapshots
 * (`gpt-4o-2024-08-06` is priced as `gpt-4o`, `gpt-4o-mini-2024-07-18` as `gpt-4o-mini`).
 */
export function priceFor(model: string, table: PriceTable): ModelPrice | undefined {
  const exact = table[model];
  if (exact) return exact;
  const base = Object.keys(table)
    .filter((name) => model.startsWith(`${name}-`))
    .sort((a, b) => b.length - a.length)[0];
  return base === undefined ? undefined : table[base];
}

export interface PricedCall {
  model: string;
  promptTokens: number;
  completionTokens: number;
  batch: boolean;
}

export function costOf(call: PricedCall, table: PriceTable = DEFAULT_PRICES): number {
  const price = priceFor(call.model, table);
  if (!price) return 0;
  const listPrice = (call.promptTokens * price.inputPerMTok + call.completionTokens * price.outputPerMTok) / 1e6;
  return call.batch ? listPrice * (1 - price.batchDiscount) : listPrice;
}
