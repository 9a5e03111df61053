/** What the pipeline records of every model call: its tokens, whether it was paid now, and its price. */
import type { ModelRole } from '../config/modelsConfig.js';
import { costOf, type CostSource, type PriceOverrides } from './pricing.js';
import type { CachedReply } from './replyCache.js';
import type { ReplyProblem, ReplyTry } from './replyTries.js';
import type { Usage } from './usage.js';

export interface CallRecord extends Usage {
  /**
   * The model role of the call. Named `stage` on the wire: call records are stored in every stage
   * state and read back by later builds and reports, so the stored field keeps its name.
   */
  stage: ModelRole;
  model: string;
  /** Served from the cache: made (and paid) by an earlier attempt or build. */
  cached: boolean;
  /** The endpoint identified itself as the mmif simulator. */
  simulated: boolean;
  /** USD this call cost now: 0 for a cache hit, and for an unpriced model (`costSource`). */
  costUsd: number;
  /**
   * Where the price came from (pricing.ts): `unpriced` when neither the price table nor the config
   * knows the model (its tokens are reported by name).
   */
  costSource: CostSource | 'unpriced';
  /** USD a cache hit did not pay again: what the call that filled the cache cost. 0 otherwise. */
  savedUsd: number;
  /** Made through the Batch API (for a cache hit: the cached reply was), priced with its discount. */
  batch: boolean;
  /** The try of a call after unusable replies (1, 2, ...; absent for the first). */
  replyTry?: number;
  /** Why this reply could not be used: the call was tried again. */
  problem?: ReplyProblem;
  /**
   * A cache hit on a reply this very stage of this sample paid for in an attempt that died before
   * recording it (a killed worker), or that an earlier stage sent ahead for it (pipeline/run/sentAhead.ts):
   * counted as paid here, so cost is never under-reported.
   */
  recovered?: boolean;
  /**
   * Stands for a request an earlier, killed execution of this stage and sample sent and never saw
   * answered (its reply never reached the cache): providers answer and bill such requests, so it is
   * counted, with the tokens of the same request made again now. One sent ahead for a later stage is
   * recorded by the stage that sent it again (pipeline/run/sentAhead.ts).
   */
  lostInFlight?: boolean;
}

/** How a reply was obtained: sent now, a cache hit, or a cache hit paid by a lost attempt of this very execution. */
type Obtained = 'paid' | 'cached' | 'recovered';

/** `baseUrl`: the endpoint that answered, when known (it tells the price table the provider). */
export function callRecord(role: ModelRole, reply: CachedReply, cached: boolean, prices: PriceOverrides, baseUrl?: string): CallRecord {
  const batch = reply.batch;
  const cost = costOf({ ...reply, ...(baseUrl ? { baseUrl } : {}) }, prices);
  const usd = cost.usd ?? 0;
  return {
    stage: role,
    model: reply.model,
    promptTokens: reply.promptTokens,
    completionTokens: reply.completionTokens,
    ...(reply.cachedPromptTokens !== undefined ? { cachedPromptTokens: reply.cachedPromptTokens } : {}),
    ...(reply.reasoningTokens !== undefined ? { reasoningTokens: reply.reasoningTokens } : {}),
    ...(reply.providerCostUsd !== undefined ? { providerCostUsd: reply.providerCostUsd } : {}),
    ...(reply.estimated !== undefined ? { estimated: reply.estimated } : {}),
    cached,
    simulated: reply.simulated,
    costUsd: cached ? 0 : usd,
    savedUsd: cached ? usd : 0,
    costSource: cost.source,
    batch,
  };
}

/** The record of one try's request. */
export function tryRecord(role: ModelRole, reply: CachedReply, how: Obtained, t: ReplyTry, problem: ReplyProblem | undefined, prices: PriceOverrides, baseUrl: string): CallRecord {
  return {
    ...callRecord(role, reply, how === 'cached', prices, baseUrl),
    ...(t.index > 0 ? { replyTry: t.index } : {}),
    ...(problem ? { problem } : {}),
    ...(how === 'recovered' ? { recovered: true } : {}),
  };
}
