/**
 * Per-worker caches behind the activities: stores, loaded configs and source readers are opened
 * once per process and shared by every activity call, instead of once per slice of samples.
 * Each is an LRU of a fixed size: a worker serving nightly dated builds (a new output, so a new
 * store, context and budget each night) keeps the recent ones, not every build it ever served.
 * Dropping an entry only drops the cache's reference: activities running with it keep theirs.
 */
import { parseBuildConfig, type BuildConfig } from '../config/buildConfig.js';
import { endpointWorkers } from '../llm/limiter.js';
import { configuredLimits as endpointLimits } from '../llm/endpointLimits.js';
import { endpointSlots } from '../config/endpointRouting.js';
import { workerLanes } from '../domain/sampleLanes.js';
import { LanePool } from '../pipeline/run/lanePool.js';
import { ModelCaller } from '../llm/modelCaller.js';
import { BuildBudget } from '../llm/buildBudget.js';
import { SpendLedger } from '../llm/spendLedger.js';
import { buildLayout, LLM_CACHE_PREFIX } from '../storage/buildLayout.js';
import type { StageContext } from '../pipeline/run/context.js';
import type { StoredConfig } from '../pipeline/planning/planBuild.types.js';
import type { RichnessTools } from '../pipeline/planning/richness.js';
import { openSources } from '../sources/source.js';
import { getJson, type ObjectStore } from '../storage/objectStore.js';
import { evalFingerprintMaterial, evalOutput, type EvalConfig } from '../config/evalConfig.js';
import { evalLayout } from '../storage/evalLayout.js';
import type { EvalContext } from '../pipeline/evaluation/evalContext.js';
import { openStore } from '../storage/openStore.js';
import { LruCache } from '../domain/lruCache.js';
import type { BuildRef } from './buildRef.js';
import { lanesBusy, lanesWaiting, sampleOnScrape } from '../telemetry/metrics.js';

/**
 * Builds a worker serves at once, give or take: a context holds the build's source readers and
 * their indexes (the heavy part), so few are kept. Stores (a build's output, its cache, an eval's
 * data) and budgets are light and needed by more than one context each, so more of them are kept.
 */
const CONTEXTS = 8;
const stores = new LruCache<ObjectStore>(4 * CONTEXTS);
const contexts = new LruCache<Promise<StageContext>>(CONTEXTS);
const budgets = new LruCache<BuildBudget>(4 * CONTEXTS);
const evalContexts = new LruCache<EvalContext>(CONTEXTS);
const lanePools = new LruCache<{ buildId: string; pool: LanePool }>(CONTEXTS);

sampleOnScrape(() => {
  lanesBusy.reset();
  lanesWaiting.reset();
  for (const { buildId, pool } of lanePools.values()) {
    lanesBusy.inc({ build: buildId }, pool.inUse);
    lanesWaiting.inc({ build: buildId }, pool.waiting);
  }
});

export function storeFor(output: string, s3: BuildRef['s3']): ObjectStore {
  return stores.get(JSON.stringify([output, s3]), () => openStore(output, s3));
}

/**
 * The hard budget of a build, one per process and build (output + buildId): planning and every
 * shard this worker runs for the build count their spend in one ledger object of the process.
 */
export function budgetFor(config: BuildConfig): BuildBudget {
  return budgets.get(JSON.stringify([config.output, config.s3, config.buildId]), () => {
    const store = storeFor(config.output, config.s3);
    const layout = buildLayout(config.buildId);
    return new BuildBudget(store, layout.budget, new SpendLedger(store, layout.spendPrefix));
  });
}

/** Where a build's model-call cache lives: `cacheUri`, or its output. */
export function cacheStoreFor(config: BuildConfig): ObjectStore {
  return storeFor(config.cacheUri ?? config.output, config.s3);
}

/** What planning scores images with (richness selection): the build's models and caches. */
export function richnessTools(ctx: StageContext): RichnessTools {
  return { models: ctx.models, cache: cacheStoreFor(ctx.config), store: ctx.store, layout: ctx.layout };
}

export function contextFor(config: BuildConfig): StageContext {
  const store = storeFor(config.output, config.s3);
  return {
    config,
    store,
    layout: buildLayout(config.buildId),
    models: new ModelCaller(cacheStoreFor(config), LLM_CACHE_PREFIX, config.llm, {
      limits: endpointLimits,
      prices: config.llm.prices,
      retry: config.llm.retry,
      // Output root + build id: dated scheduled runs share a build id but not an output.
      owner: `${config.output}\u0000${config.buildId}`,
      keepReasoning: config.training.keepReasoning,
      budget: budgetFor(config),
      build: config.buildId,
    }),
    sources: openSources(config.sources, config.s3),
  };
}

/** The context of a planned build, from the config its plan stored (checked against the fingerprint). */
export function contextForBuild(build: BuildRef): Promise<StageContext> {
  const id = `${build.output}\u0000${build.buildId}\u0000${build.configFingerprint}`;
  return contexts.get(id, () => {
    const ctx = loadContext(build);
    ctx.catch(() => contexts.deleteIf(id, ctx));
    return ctx;
  });
}

/**
 * This worker's sample lanes for a build, shared by every slice activity of it the worker runs: its
 * part of the lanes the build's endpoint slots need (domain/sampleLanes.ts), re-sized on each call
 * as workers join or leave the task queue.
 */
export function lanesForBuild(build: BuildRef, config: BuildConfig): LanePool {
  const lanes = workerLanes(endpointSlots(config), endpointWorkers());
  const { pool } = lanePools.get(`${build.output}\u0000${build.buildId}\u0000${build.configFingerprint}`, () => ({ buildId: build.buildId, pool: new LanePool(lanes) }));
  if (pool.lanes !== lanes) pool.resize(lanes);
  return pool;
}

async function loadContext(build: BuildRef): Promise<StageContext> {
  const store = storeFor(build.output, build.s3);
  const stored = await getJson<StoredConfig>(store, buildLayout(build.buildId).config);
  if (!stored) throw new Error(`build '${build.buildId}' has no stored config in ${store.root}: was it planned?`);
  if (stored.configFingerprint !== build.configFingerprint) {
    throw new Error(`build '${build.buildId}' in ${store.root} was planned with another config`);
  }
  return contextFor(parseBuildConfig(stored.config));
}

/** An evaluation's stores and model caller (the builds' cache and limiters), once per worker and config. */
export function evalContextFor(config: EvalConfig): EvalContext {
  const id = evalFingerprintMaterial(config) + JSON.stringify([config.cacheUri, config.model.concurrency, config.judge?.concurrency]);
  return evalContexts.get(id, () => {
    const out = evalOutput(config);
    return {
      config,
      data: storeFor(config.data, config.s3),
      out: storeFor(out, config.s3),
      layout: evalLayout(config.evalId),
      models: new ModelCaller(storeFor(config.cacheUri ?? out, config.s3), LLM_CACHE_PREFIX, config.llm, {
        limits: endpointLimits,
        prices: config.llm.prices,
        retry: config.llm.retry,
        owner: `${out}\u0000eval\u0000${config.evalId}`,
        build: config.evalId,
      }),
    };
  });
}
