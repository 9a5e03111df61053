/**
 * A workflow's config input, resolved: parsed and defaulted by an activity outside the sandbox
 * (activities/resolveConfig.ts). The history records the resolved config, so a changed default or
 * schema never changes how a running workflow replays, and the workflow bundle holds no zod and no
 * config schema (test/unit/workflowBoundary.test.ts). A bad config fails the workflow with the
 * activity's one line.
 */
import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type * as activities from '../activities/index.js';
import type { BuildConfig } from '../config/buildConfig.js';
import type { EvalConfig } from '../config/evalConfig.js';

// The config's own retry policy is not known before it is parsed: a short fixed one (a bad config
// fails at once anyway: ConfigError is permanent).
const { resolveBuildConfig, resolveEvalConfig } = proxyActivities<typeof activities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 10 },
});

export const buildConfigInput = (input: unknown): Promise<BuildConfig> => resolved(() => resolveBuildConfig(input));

export const evalConfigInput = (input: unknown): Promise<EvalConfig> => resolved(() => resolveEvalConfig(input));

async function resolved<T>(resolve: () => Promise<T>): Promise<T> {
  try {
    return await resolve();
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : undefined;
    if (cause instanceof ApplicationFailure && cause.type === 'ConfigError') throw ApplicationFailure.nonRetryable(cause.message, 'ConfigError');
    throw err;
  }
}
