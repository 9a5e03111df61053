/** What the pipeline records of every model call: its tokens, whether it was paid now, and its price. */
import type { Stage } from '../config/buildConfig.js';
import { costOf, type PriceTable } from './pricing.js';
import type { CachedReply } from './replyCache.js';
import type { ReplyProblem, ReplyTry } from './replyTries.js';
import type { Usage } from './usage.js';

export interface CallRecord extends Usage {
  stage: Stage;
  model: string;
  /** Served from the cache: made (and paid) by an earlier attempt or build. */
  cached: boolean;
  /** The endpoint identified itself as the mmif simulator. */
  simulated: boolean;
  /** USD this call cost now: 0 for a cache hit (see pricing.ts for unknown models). */
  costUsd: number;
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
   * recording it (a killed worker): counted as paid here, so cost is never under-reported.
   */
  recovered?: boolean;
  /**
   * Stands for a request an earlier, killed execution of this stage and sample sent and never saw
   * answered (its reply never reached the cache): providers answer and bill such requests, so it is
   * counted, with the tokens of the same request made again now.
   */
  lostInFlight?: boolean;
}

/** How a reply was obtained: sent now, a cache hit, or a cache hit paid by a lost attempt of this very execution. */
export type Obtained = 'paid' | 'cached' | 'recovered';

export function callRecord(stage: Stage, reply: CachedReply, cached: boolean, prices: PriceTable): CallRecord {
  const batch = reply.batch ?? false;
  const cost = costOf({ ...reply, batch }, prices);
  return {
    stage,
    model: reply.model,
    promptTokens: reply.promptTokens,
    completionTokens: reply.completionTokens,
    ...(reply.cachedPromptTokens !== undefined ? { cachedPromptTokens: reply.cachedPromptTokens } : {}),
    ...(reply.reasoningTokens !== undefined ? { reasoningTokens: reply.reasoningTokens } : {}),
    ...(reply.providerCostUsd !== undefined ? { providerCostUsd: reply.providerCostUsd } : {}),
    cached,
    simulated: reply.simulated,
    costUsd: cached ? 0 : cost,
    savedUsd: cached ? cost : 0,
    batch,
  };
}

/** The record of one try's request. */
export function tryRecord(stage: Stage, reply: CachedReply, how: Obtained, t: ReplyTry, problem: ReplyProblem | undefined, prices: PriceTable): CallRecord {
  return {
    ...callRecord(stage, reply, how === 'cached', prices),
    ...(t.index > 0 ? { replyTry: t.index } : {}),
    ...(problem ? { problem } : {}),
    ...(how === 'recovered' ? { recovered: true } : {}),
  };
}
