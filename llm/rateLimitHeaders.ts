/**
 * What a provider says about its limits: Retry-After on a 429, and OpenAI's x-ratelimit-* headers
 * (also sent by Azure, Groq, Together, vLLM gateways...) on every answer.
 */

/** Anything with `get(name)`: fetch Headers, as on SDK responses and SDK errors. */
export interface HeaderSource {
  get(name: string): string | null;
}

/** One budget (requests or tokens) as the provider last reported it. */
export interface BudgetReport {
  limit?: number;
  remaining?: number;
  /** Until the budget is full again. */
  resetMs?: number;
}

interface RateLimitReport {
  requests: BudgetReport;
  tokens: BudgetReport;
}

export function readRateLimitHeaders(headers: HeaderSource): RateLimitReport {
  const budget = (name: 'requests' | 'tokens'): BudgetReport => {
    const limit = parseCount(headers.get(`x-ratelimit-limit-${name}`));
    const remaining = parseCount(headers.get(`x-ratelimit-remaining-${name}`));
    const resetMs = parseDuration(headers.get(`x-ratelimit-reset-${name}`));
    return {
      ...(limit !== undefined ? { limit } : {}),
      ...(remaining !== undefined ? { remaining } : {}),
      ...(resetMs !== undefined ? { resetMs } : {}),
    };
  };
  return { requests: budget('requests'), tokens: budget('tokens') };
}

/**
 * How long a 429 asks us to wait: OpenAI's `retry-after-ms`, else `Retry-After` as seconds or an
 * HTTP date (RFC 9110). Undefined when neither is present or readable.
 */
export function retryAfterMs(headers: HeaderSource | undefined, now = Date.now()): number | undefined {
  const ms = Number(headers?.get('retry-after-ms') ?? Number.NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers?.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * The longest wait a refusal asks for: Retry-After (retry-after-ms, retry-after), else the reset of a
 * budget it reports spent (x-ratelimit-remaining-* 0 with x-ratelimit-reset-*). Undefined when it asks none.
 */
export function askedWaitMs(headers: HeaderSource | undefined, now = Date.now()): number | undefined {
  const retryAfter = retryAfterMs(headers, now);
  if (retryAfter !== undefined || !headers) return retryAfter;
  const report = readRateLimitHeaders(headers);
  const resets = [report.requests, report.tokens].filter((b) => b.remaining === 0 && b.resetMs !== undefined).map((b) => b.resetMs!);
  return resets.length > 0 ? Math.max(...resets) : undefined;
}

const UNIT_MS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 1e-3, µs: 1e-3, ns: 1e-6 };

/** Go duration strings, OpenAI's format for reset headers: `6m0s`, `1.5s`, `20ms`, `1h2m3s`. */
export function parseDuration(text: string | null | undefined): number | undefined {
  const value = text?.trim();
  if (!value || !/^(\d+(\.\d+)?(h|ms|m|s|us|µs|ns))+$/.test(value)) return undefined;
  let total = 0;
  for (const [, amount, unit] of value.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/g)) total += Number(amount) * UNIT_MS[unit!]!;
  return total;
}

function parseCount(text: string | null): number | undefined {
  if (text === null || !/^\s*\d+\s*$/.test(text)) return undefined;
  return Number(text);
}
