/**
 * Parsing and defaulting a workflow's config input, in an activity: outside the sandbox, so the
 * workflow bundle holds no zod and no schema, and a changed default reaches only builds started
 * after it (workflows/configInput.ts; a running build is pinned to its worker version). A bad config
 * is a ConfigError, permanent: the activity fails at once, naming every bad field.
 */
import { parseBuildConfig, type BuildConfig } from '../config/buildConfig.js';
import { parseEvalConfig, type EvalConfig } from '../config/evalConfig.js';

export async function resolveBuildConfig(input: unknown): Promise<BuildConfig> {
  return parseBuildConfig(input);
}

export async function resolveEvalConfig(input: unknown): Promise<EvalConfig> {
  return parseEvalConfig(input);
}
