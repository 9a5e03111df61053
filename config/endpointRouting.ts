/**
 * Each stage's endpoint, task queue and Batch API use, from a parsed build config. Pure and
 * deterministic, and without zod (types only from buildConfig.ts): workflow code calls it on every
 * build, so the workflow isolate need not evaluate the config schemas for it.
 */
import type { BuildConfig } from './buildConfig.js';
import type { EndpointConfig, ModelRole } from './modelsConfig.js';
import { endpointReplicas, replicaUrls } from './endpointReplicas.js';
import { STAGES, type StageName } from './stages.js';

export function endpointFor(config: BuildConfig, role: ModelRole): EndpointConfig {
  return config.models[role] ?? config.models.default;
}

/**
 * Each stage's task queue, where its endpoint sets one: the queue of the stage's own model role (the
 * first its descriptor names, config/stages.ts). The image stage calls no model; a multiturn
 * build's chat stage runs on the answer endpoint's queue (most of its calls are answers).
 */
export function stageTaskQueues(config: BuildConfig): Partial<Record<StageName, string>> {
  const queues: Partial<Record<StageName, string>> = {};
  for (const stage of STAGES[config.mode]) {
    const role = stage.modelRoles[0];
    const queue = role && endpointFor(config, role).taskQueue;
    if (queue) queues[stage.name] = queue;
  }
  return queues;
}

/** Stages whose first call per sample the Batch API can send (a single-turn build's; a multiturn one batches nothing). */
export const BATCHABLE_STAGES = STAGES.single.filter((s) => s.batchable).map((s) => s.name as BatchableStage);
export type BatchableStage = Extract<(typeof STAGES.single)[number], { batchable: true }>['name'];

/** The roles a batchable stage calls after its first call: never sent through the Batch API, so `batch` is refused on them. */
export const SECONDARY_BATCH_ROLES: readonly ModelRole[] = [...new Set(STAGES.single.filter((s) => s.batchable).flatMap((s) => s.modelRoles.slice(1)))].filter(
  (role) => !STAGES.single.some((s) => s.batchable && s.modelRoles[0] === role),
);

/** The stages whose first calls go through the Batch API: the batchable ones whose own endpoint sets `batch`. */
export function batchStages(config: BuildConfig): BatchableStage[] {
  return STAGES[config.mode].flatMap((s) => (s.batchable && endpointFor(config, s.modelRoles[0]).batch ? [s.name] : []));
}

/**
 * The requests per second the build's endpoints allow together (each distinct endpoint's
 * `requestsPerMinute`, per replica), for the share of the limit in use that `mmif status` shows; undefined when
 * one of them sets none (its limit is the provider's, learned by the workers, not known here).
 */
export function requestsPerSecondLimit(config: BuildConfig): number | undefined {
  let perMinute = 0;
  for (const r of namedEndpoints(config).flatMap(endpointReplicas)) {
    if (r.requestsPerMinute === undefined) return undefined;
    perMinute += r.requestsPerMinute;
  }
  return perMinute / 60;
}

/**
 * The requests in flight the build's endpoints allow together: each distinct endpoint's configured
 * `concurrency` (its slots; each replica's), added up. What the build's sample lanes are sized from (domain/sampleLanes.ts).
 */
export function endpointSlots(config: BuildConfig): number {
  return namedEndpoints(config)
    .flatMap(endpointReplicas)
    .reduce((slots, r) => slots + r.concurrency, 0);
}

/** Every endpoint the config names (the default and each role's override), once each. */
function namedEndpoints(config: BuildConfig): EndpointConfig[] {
  const named: EndpointConfig[] = Object.values(config.models).filter((e): e is EndpointConfig => e !== undefined);
  return [...new Map(named.map((e) => [JSON.stringify([replicaUrls(e), e.model, e.apiKeyEnv]), e])).values()];
}
