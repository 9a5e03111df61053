/**
 * Per-worker caches behind the activities: stores, loaded configs and source readers are opened
 * once per process and shared by every activity call, instead of once per slice of samples.
 */
import { parseBuildConfig, type BuildConfig, type EndpointConfig } from '../config/buildConfig.js';
import type { EndpointLimits } from '../llm/limiter.js';
import { ModelCaller } from '../llm/modelCaller.js';
import { BuildBudget } from '../llm/buildBudget.js';
import { SpendLedger } from '../llm/spendLedger.js';
import { buildLayout, LLM_CACHE_PREFIX } from '../storage/buildLayout.js';
import type { StageContext } from '../pipeline/context.js';
import type { StoredConfig } from '../pipeline/planBuild.js';
import type { RichnessTools } from '../pipeline/richness.js';
import { openSources } from '../sources/source.js';
import { getJson, type ObjectStore } from '../storage/objectStore.js';
import { evalFingerprintMaterial, evalOutput, type EvalConfig } from '../config/evalConfig.js';
import { evalLayout } from '../storage/evalLayout.js';
import type { EvalContext } from '../pipeline/evaluation/evalContext.js';
import { openStore } from '../storage/openStore.js';
import type { BuildRef } from './buildRef.js';

const stores = new Map<string, ObjectStore>();
const contexts = new Map<string, Promise<StageContext>>();
const budgets = new Map<string, BuildBudget>();

export function storeFor(output: string, s3: BuildRef['s3']): ObjectStore {
  const id = JSON.stringify([output, s3]);
  let store = stores.get(id);
  if (!store) {
    store = openStore(output, s3);
    stores.set(id, store);
  }
  return store;
}

/**
 * The hard budget of a build, one per process and build (output + buildId): planning and every
 * shard this worker runs for the build count their spend in one ledger object of the process.
 */
export function budgetFor(config: BuildConfig): BuildBudget {
  const id = JSON.stringify([config.output, config.s3, config.buildId]);
  let budget = budgets.get(id);
  if (!budget) {
    const store = storeFor(config.output, config.s3);
    const layout = buildLayout(config.buildId);
    budget = new BuildBudget(store, layout.budget, new SpendLedger(store, layout.spendPrefix));
    budgets.set(id, budget);
  }
  return budget;
}

/** Where a build's model-call cache lives: `cacheUri`, or its output. */
export function cacheStoreFor(config: BuildConfig): ObjectStore {
  return storeFor(config.cacheUri ?? config.output, config.s3);
}

/** What planning scores images with (richness selection): the build's models and caches. */
export function richnessTools(ctx: StageContext): RichnessTools {
  return { models: ctx.models, cache: cacheStoreFor(ctx.config), store: ctx.store, layout: ctx.layout };
}

/** The limits an endpoint's config sets (its limiter learns the rest from the provider's headers). */
const endpointLimits = (e: EndpointConfig): EndpointLimits => ({ concurrency: e.concurrency, requestsPerMinute: e.requestsPerMinute, tokensPerMinute: e.tokensPerMinute });

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
      budget: budgetFor(config),
    }),
    sources: openSources(config.sources, config.s3),
  };
}

/** The context of a planned build, from the config its plan stored (checked against the fingerprint). */
export function contextForBuild(build: BuildRef): Promise<StageContext> {
  const id = `${build.output}\u0000${build.buildId}\u0000${build.configFingerprint}`;
  let ctx = contexts.get(id);
  if (!ctx) {
    ctx = loadContext(build);
    ctx.catch(() => contexts.delete(id));
    contexts.set(id, ctx);
  }
  return ctx;
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

const evalContexts = new Map<string, EvalContext>();

/** An evaluation's stores and model caller (the builds' cache and limiters), once per worker and config. */
export function evalContextFor(config: EvalConfig): EvalContext {
  const id = evalFingerprintMaterial(config) + JSON.stringify([config.cacheUri, config.model.concurrency, config.judge?.concurrency]);
  let ctx = evalContexts.get(id);
  if (!ctx) {
    const out = evalOutput(config);
    ctx = {
      config,
      data: storeFor(config.data, config.s3),
      out: storeFor(out, config.s3),
      layout: evalLayout(config.evalId),
      models: new ModelCaller(storeFor(config.cacheUri ?? out, config.s3), LLM_CACHE_PREFIX, config.llm, {
        limits: endpointLimits,
        prices: config.llm.prices,
        retry: config.llm.retry,
        owner: `${out}\u0000eval\u0000${config.evalId}`,
      }),
    };
    evalContexts.set(id, ctx);
  }
  return ctx;
}
