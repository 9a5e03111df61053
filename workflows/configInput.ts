/**
 * A workflow's config input, parsed. The config modules (zod and the schemas) are imported only
 * here, when a workflow that takes a config parses it: with the SDK's reusable V8 context every
 * workflow run evaluates the modules it imports in its own module cache, and evaluating zod and the
 * schemas cost ~1.6 MB of heap per cached workflow, shard and lease workflows included, which never
 * parse a config (bench/README.md, where the memory went, round 3). `webpackMode: "eager"` keeps
 * the modules in the one bundle; the import resolves in the same workflow activation, so the
 * commands and their order are those of a static import.
 */
import { ApplicationFailure } from '@temporalio/workflow';
import type { BuildConfig } from '../config/buildConfig.js';
import { ConfigError } from '../config/configError.js';
import type { EvalConfig } from '../config/evalConfig.js';

export async function buildConfigInput(input: unknown): Promise<BuildConfig> {
  const { parseBuildConfig } = await import(/* webpackMode: "eager" */ '../config/buildConfig.js');
  return failOnConfigError(() => parseBuildConfig(input));
}

export async function evalConfigInput(input: unknown): Promise<EvalConfig> {
  const { parseEvalConfig } = await import(/* webpackMode: "eager" */ '../config/evalConfig.js');
  return failOnConfigError(() => parseEvalConfig(input));
}

/** A bad config fails the workflow at once (no retry: the same input never parses). */
function failOnConfigError<T>(parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    if (err instanceof ConfigError) throw ApplicationFailure.nonRetryable(err.message, 'ConfigError');
    throw err;
  }
}
