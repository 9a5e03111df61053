/**
 * Fingerprints: the canonical JSON of everything in a config that shapes the output, which a re-run
 * must match to continue a build (or an eval). Settings that change no output byte are left out, so
 * tuning them never invalidates the work done.
 */
import type { BuildConfig } from './buildConfig.js';
import type { LlmConfig } from './llmConfig.js';
import type { EndpointConfig } from './modelsConfig.js';
import { chatSettings } from './generationConfig.js';

/** Build settings that change no output byte. */
const OPERATIONAL_KEYS = ['maxParallelShards', 'sliceSize', 'shardsPerRun', 'retry', 'retryWindowSeconds', 'searchAttributes', 'cacheUri', 'batchApi'] as const;

/** Endpoint settings that pace calls but change no reply. */
const ENDPOINT_OPERATIONAL_KEYS = ['concurrency', 'requestsPerMinute', 'tokensPerMinute', 'batch', 'taskQueue'] as const;

/** Model-call settings that change no reply. */
const LLM_OPERATIONAL_KEYS = [
  'concurrency',
  'prices',
  'retry',
  'errorBudget',
  'preflight',
  'rerunModelCallRejects',
  'budget',
  'maxReplyBytes',
  'maxRetryAfterSeconds',
  'imageIdSaltEnv',
] as const;

function without<T extends object>(value: T, keys: readonly string[]): Record<string, unknown> {
  const copy = { ...value } as Record<string, unknown>;
  for (const key of keys) delete copy[key];
  return copy;
}

/** An endpoint without its pacing settings (its replicas' own limits included): its replicas are their URLs, in no particular order (routing ignores it). */
export function endpointMaterial(endpoint: EndpointConfig): Record<string, unknown> {
  const material = without(endpoint, ENDPOINT_OPERATIONAL_KEYS);
  if (endpoint.baseUrls) material.baseUrls = endpoint.baseUrls.map((r) => (typeof r === 'string' ? r : r.baseUrl)).sort();
  return material;
}

/** The `llm` settings without those that change no reply. */
export const llmMaterial = (llm: LlmConfig): Record<string, unknown> => without(llm, LLM_OPERATIONAL_KEYS);

/** Canonical JSON (sorted keys) of everything in a build config that shapes the output. */
export function fingerprintMaterial(config: BuildConfig): string {
  const models = Object.fromEntries(Object.entries(config.models).map(([stage, endpoint]) => [stage, endpointMaterial(endpoint)]));
  const copy = without({ ...config, models, llm: llmMaterial(config.llm) }, OPERATIONAL_KEYS);
  // A multiturn build's chat settings are written out in full (explicit defaults = omitted ones).
  if (config.mode === 'multiturn') copy.chat = chatSettings(config);
  return canonicalJson(copy);
}

export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1))) : v,
  );
}
