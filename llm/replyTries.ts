/**
 * Tries of one call. A reply can arrive and still be unusable: empty, unparseable after the repair,
 * cut by the token limit, refused by a content filter. Such a call is tried again with a new seed
 * (a different request, so a different cache entry), and a cut reply with llm.maxTokensCeiling
 * tokens; after llm.replyTries tries the sample is rejected with the last reason.
 */
import type { z } from 'zod';
import type { BuildConfig } from '../config/buildConfig.js';
import type { ModelRole } from '../config/modelsConfig.js';
import { SampleRejection, type ModelCallFault } from '../domain/rejection.js';
import type { ResolvedEndpoint } from './resolvedEndpoint.js';

/** Why a reply cannot be used; also the rejection reason code when every try gives one. */
export type ReplyProblem = 'empty-reply' | 'truncated-reply' | 'content-filter' | 'invalid-json';

/** One try of a call: its number (0 = the plain request) and the token limit it asks for. */
export interface ReplyTry {
  index: number;
  maxTokens: number;
}

/** How one try went: the value, or why its reply cannot be used (and which endpoint gave it). */
type TryOutcome<T> = { ok: true; value: T } | { ok: false; problem: ReplyProblem; detail: string; endpoint: ResolvedEndpoint };

export interface TryPass {
  /** Re-request unusable replies stored by another build instead of replaying them. */
  refreshForeign: boolean;
  /** Set when a try replayed an unusable reply another build stored. */
  sawForeign: boolean;
}

/** The part of a reply its usability depends on. */
interface ReplyText {
  content: string;
  finishReason: string;
  /** The model returned thinking (taken apart from `content`, reasoning.ts). */
  thought?: true;
}

/** Seeds of tries after the first: far from the small seeds answer regenerations use. */
const TRY_SEED_STRIDE = 1000;

export function firstTry(llm: BuildConfig['llm']): ReplyTry {
  return { index: 0, maxTokens: llm.maxTokens };
}

/** The `seed` a try sends: the first try keeps the request's own, so its cache key is what it always was. */
export function trySeed(requestSeed: number | undefined, t: ReplyTry): number | undefined {
  return t.index === 0 ? requestSeed : (requestSeed ?? 0) + t.index * TRY_SEED_STRIDE;
}

/**
 * Runs tries 0, 1, ... of one call until one gives a usable reply. Each try after the first sends
 * another seed (a new request and cache entry), and after a reply cut by max_tokens the tries ask
 * for `llm.maxTokensCeiling` tokens. The numbering depends only on what the cache holds, so a
 * retried activity walks the same keys and pays for nothing twice.
 *
 * Unusable replies are never final. The first pass replays the cached tries as they are — the
 * build that stored them took the same path, so a sample it recovered on a later try comes out the
 * same at no cost. When every try failed and some of them replayed another build's unusable
 * replies (a flaky endpoint then; perhaps fixed now), a second pass asks for those again.
 */
export async function runTries<T>(role: ModelRole, llm: BuildConfig['llm'], run: (t: ReplyTry, pass: TryPass) => Promise<TryOutcome<T>>): Promise<T> {
  let last: Extract<TryOutcome<T>, { ok: false }> | undefined;
  for (const refreshForeign of [false, true]) {
    const pass: TryPass = { refreshForeign, sawForeign: false };
    let t = firstTry(llm);
    for (let index = 0; index < llm.replyTries; index++) {
      const outcome = await run({ ...t, index }, pass);
      if (outcome.ok) return outcome.value;
      last = outcome;
      const ceiling = llm.maxTokensCeiling;
      if (outcome.problem === 'truncated-reply' && ceiling !== undefined && t.maxTokens < ceiling) t = { ...t, maxTokens: ceiling };
    }
    if (!pass.sawForeign) break;
  }
  const fault: ModelCallFault = { endpoint: last!.endpoint.baseURL, model: last!.endpoint.model, status: 200, excerpt: `${last!.problem}: ${last!.detail}`, tries: llm.replyTries };
  throw new SampleRejection(`${role}: ${last!.problem}: ${last!.detail} (${llm.replyTries} tries)`, { modelCall: fault });
}

export const PROBLEM_DETAIL: Record<ReplyProblem, string> = {
  'empty-reply': 'the reply was empty',
  'truncated-reply': 'the reply was cut by the token limit (finish_reason length)',
  'content-filter': 'a content filter refused the reply',
  'invalid-json': 'the reply was not the JSON asked for',
};

/** What was wrong with a reply that has `problem`, for the rejection reason. */
export function problemDetail(reply: ReplyText, problem: ReplyProblem): string {
  if (problem === 'truncated-reply' && reply.finishReason !== 'length') return 'the reply was only thinking, no answer (the token limit was spent thinking)';
  return PROBLEM_DETAIL[problem];
}

/** Why a prose reply cannot be used, if it cannot. */
export function textProblem(reply: ReplyText): ReplyProblem | undefined {
  if (reply.finishReason === 'content_filter') return 'content-filter';
  if (reply.finishReason === 'length') return 'truncated-reply';
  // Only thinking: the model spent its budget before answering, whatever finish reason it gave.
  if (!reply.content.trim()) return reply.thought ? 'truncated-reply' : 'empty-reply';
  return undefined;
}

/** Why a JSON reply cannot be used against `schema`, if it cannot: filtered, cut, empty, or just not the JSON. */
export function jsonProblem<T>(reply: ReplyText, schema: z.ZodType<T>): ReplyProblem | undefined {
  if (reply.finishReason === 'content_filter') return 'content-filter';
  return parseJsonReply(reply, schema).ok ? undefined : (textProblem(reply) ?? 'invalid-json');
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

/** Accepts bare JSON or JSON inside a markdown fence (models without structured output add one). */
export function parseJsonReply<T>(reply: ReplyText, schema: z.ZodType<T>): Parsed<T> {
  if (reply.finishReason === 'length') return { ok: false, error: 'the reply was cut off by the token limit' };
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(reply.content);
  const text = (fenced ? fenced[1]! : reply.content).trim();
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    return { ok: false, error: `not valid JSON: ${(err as Error).message}` };
  }
  const result = schema.safeParse(data);
  if (!result.success) {
    return { ok: false, error: `JSON does not match the schema: ${result.error.issues.map((i) => `${i.path.join('.') || '(root)'} ${i.message}`).join('; ')}` };
  }
  return { ok: true, value: result.data };
}

/** The start and the end of an unusable reply quoted back in a repair request; a reply no longer than both together is quoted whole. */
const REPAIR_QUOTE = { headChars: 2048, tailChars: 512 } as const;

/**
 * An unusable reply as the repair request quotes it back: whole when short, else its first 2 KB and
 * last 512 characters with the length left out between them, so a runaway reply (500 KB of nested
 * JSON) is never sent again whole.
 */
export function repairQuote(content: string): string {
  const { headChars, tailChars } = REPAIR_QUOTE;
  if (content.length <= headChars + tailChars) return content;
  return `${content.slice(0, headChars)}\n[... ${content.length - headChars - tailChars} characters of this reply left out ...]\n${content.slice(-tailChars)}`;
}
