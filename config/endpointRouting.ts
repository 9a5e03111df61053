/**
 * Each stage's endpoint, task queue and Batch API use, from a parsed build config. Pure and
 * deterministic, and without zod (types only from buildConfig.ts): workflow code calls it on every
 * build, so the workflow isolate need not evaluate the config schemas for it.
 */
import type { BuildConfig, EndpointConfig, ModelRole } from './buildConfig.js';

export function endpointFor(config: BuildConfig, role: ModelRole): EndpointConfig {
  return config.models[role] ?? config.models.default;
}

/**
 * Pipeline stages whose activities run on an endpoint's own task queue: the queue of the step's own
 * model role, the first its definition names (pipeline/stages/; test/unit/stageRegistry.test.ts
 * checks this list against them). The image stage calls no model. A multiturn build's chat stage
 * runs on the answer endpoint's queue: most of its calls are answers (the rest, rejected answers, on
 * the same chat context).
 */
export function stageTaskQueues(config: BuildConfig): Partial<Record<'instruction' | 'constraints' | 'answer' | 'rejected' | 'chat', string>> {
  const queues: Partial<Record<'instruction' | 'constraints' | 'answer' | 'rejected' | 'chat', string>> = {};
  for (const stage of ['instruction', 'constraints', 'answer', 'rejected'] as const) {
    const queue = endpointFor(config, stage).taskQueue;
    if (queue) queues[stage] = queue;
  }
  const answerQueue = endpointFor(config, 'answer').taskQueue;
  if (config.mode === 'multiturn' && answerQueue) queues.chat = answerQueue;
  return queues;
}

/** Stages whose first call per sample goes through the Batch API. */
export const BATCHABLE_STAGES = ['instruction', 'constraints', 'answer', 'rejected'] as const;

export function batchStages(config: BuildConfig): Array<(typeof BATCHABLE_STAGES)[number]> {
  return BATCHABLE_STAGES.filter((stage) => endpointFor(config, stage).batch);
}

/**
 * The requests per second the build's endpoints allow together (each distinct endpoint's
 * `requestsPerMinute`), for the share of the limit in use that `mmif status` shows; undefined when
 * one of them sets none (its limit is the provider's, learned by the workers, not known here).
 */
export function requestsPerSecondLimit(config: BuildConfig): number | undefined {
  let perMinute = 0;
  for (const e of namedEndpoints(config)) {
    if (e.requestsPerMinute === undefined) return undefined;
    perMinute += e.requestsPerMinute;
  }
  return perMinute / 60;
}

/**
 * The requests in flight the build's endpoints allow together: each distinct endpoint's configured
 * `concurrency` (its slots), added up. What the build's sample lanes are sized from (domain/sampleLanes.ts).
 */
export function endpointSlots(config: BuildConfig): number {
  return namedEndpoints(config).reduce((slots, e) => slots + e.concurrency, 0);
}

/** Every endpoint the config names (the default and each role's override), once each. */
function namedEndpoints(config: BuildConfig): EndpointConfig[] {
  const named: EndpointConfig[] = Object.values(config.models).filter((e): e is EndpointConfig => e !== undefined);
  return [...new Map(named.map((e) => [JSON.stringify([e.baseUrl, e.model, e.apiKeyEnv]), e])).values()];
}
