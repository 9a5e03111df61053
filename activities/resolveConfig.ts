/**
 * Parsing and defaulting a workflow's config input, in an activity: outside the sandbox, so the
 * workflow bundle need not evaluate zod and the schemas for new runs, and a changed default reaches
 * only runs started after it (workflows/configInput.ts). A bad config is a ConfigError, permanent:
 * the activity fails at once, naming every bad field.
 */
import { parseBuildConfig, type BuildConfig } from '../config/buildConfig.js';
import { parseEvalConfig, type EvalConfig } from '../config/evalConfig.js';
import { RESOLVED_CONFIG_VERSION, type ResolvedConfig } from '../config/resolvedConfig.js';

export async function resolveBuildConfig(input: unknown): Promise<ResolvedConfig<BuildConfig>> {
  return { version: RESOLVED_CONFIG_VERSION, config: parseBuildConfig(input) };
}

export async function resolveEvalConfig(input: unknown): Promise<ResolvedConfig<EvalConfig>> {
  return { version: RESOLVED_CONFIG_VERSION, config: parseEvalConfig(input) };
}
