/** The build config `npm start` runs: the bundled samples, ./out, and models from the environment. */
import { fileURLToPath } from 'node:url';
import type { BuildConfigInput } from '../config/buildConfig.js';
import { MODEL_ROLES, type ModelRole } from '../config/modelsConfig.js';

export const SAMPLES_DIR = fileURLToPath(new URL('../samples/cc3m/', import.meta.url));
export const SIMULATOR_MODEL = 'mmif-sim-vlm';

/** Keeps images with some structure: the blank sheet (edge density 0) and the plain sunset (0.012) go. */
const QUICKSTART_RICHNESS = { scorer: 'statistic', minScore: 0.02 } as const;

/** MMIF_MODEL names the default model; MMIF_MODEL_<ROLE> overrides one model role (e.g. MMIF_MODEL_REJECTED). */
export function modelsFromEnv(env: NodeJS.ProcessEnv, fallback: string): BuildConfigInput['models'] {
  const models: BuildConfigInput['models'] = { default: { model: env.MMIF_MODEL || fallback } };
  for (const role of MODEL_ROLES) {
    const model = env[`MMIF_MODEL_${role.toUpperCase()}`];
    if (model) models[role as ModelRole] = { model };
  }
  return models;
}

export function quickstartConfig(options: { buildId: string; output: string; maxSamples: number; models: BuildConfigInput['models'] }): BuildConfigInput {
  return {
    buildId: options.buildId,
    seed: 7,
    output: options.output,
    // Richness selection as the paper's first stage, with the built-in statistic (docs/sources.md: richness).
    sources: [{ type: 'cc3m', uri: SAMPLES_DIR, layout: 'files', richness: QUICKSTART_RICHNESS }],
    maxSamples: options.maxSamples,
    shardSize: 5,
    sliceSize: 5,
    models: options.models,
  };
}
