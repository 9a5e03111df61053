/**
 * The context every build stage runs with (config, stores, layout, model caller), built once per
 * activity call, and the seeded generator each random choice of a sample draws from.
 */
import type { BuildConfig } from '../../config/buildConfig.js';
import type { ModelCaller } from '../../llm/modelCaller.js';
import type { BuildLayout } from '../../storage/buildLayout.js';
import type { SourceReader } from '../../sources/contract.js';
import type { ObjectStore } from '../../storage/objectStore.js';
import { rngFor, type Rng } from '../../domain/random.js';
import type { SliceMemo } from './sliceMemo.js';

/** Everything a stage needs, built once per activity call. */
export interface StageContext {
  config: BuildConfig;
  /** The output root; keys come from `layout`. */
  store: ObjectStore;
  layout: BuildLayout;
  models: ModelCaller;
  /** Readers by BuildConfig.sources index. */
  sources: readonly SourceReader[];
  /** Within one execution of a slice (runSliceStages): the stage states and images it read or wrote. */
  memo?: SliceMemo;
}

/** The generator for one random choice of one sample: independent of order, retries and workers. */
export function sampleRng(ctx: StageContext, sampleId: string, purpose: string): Rng {
  return rngFor(ctx.config.seed, sampleId, purpose);
}
