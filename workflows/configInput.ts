/**
 * A workflow's config input, resolved: parsed and defaulted by an activity outside the sandbox
 * (activities/resolveConfig.ts), which returns a versioned ResolvedConfig (config/resolvedConfig.ts).
 * The history records the resolved config, so a changed default or schema never changes how a
 * running workflow replays, and new runs never evaluate zod and the schemas in the sandbox.
 *
 * Runs started before this change (no `config-resolved-outside-workflow` marker in their history)
 * replay the old path: the config modules imported here and parsed in the workflow. Those modules
 * are imported only then: with the SDK's reusable V8 context every workflow run evaluates the
 * modules it imports in its own module cache, and evaluating zod and the schemas cost ~1.6 MB of
 * heap per cached workflow (bench/README.md, where the memory went, round 3). `webpackMode: "eager"`
 * keeps them in the one bundle; the import resolves in the same workflow activation, so the
 * commands and their order are those of a static import. Once no such run can be running, replace
 * `patched` by `deprecatePatch` and drop the old path (docs/operations.md, deprecation).
 */
import { ActivityFailure, ApplicationFailure, patched, proxyActivities } from '@temporalio/workflow';
import type * as activities from '../activities/index.js';
import type { BuildConfig } from '../config/buildConfig.js';
import { ConfigError } from '../config/configError.js';
import type { EvalConfig } from '../config/evalConfig.js';
import { READ_CONFIG_VERSIONS, type ResolvedConfig } from '../config/resolvedConfig.js';

export const CONFIG_RESOLVED_OUTSIDE_WORKFLOW = 'config-resolved-outside-workflow';

// The config's own retry policy is not known before it is parsed: a short fixed one (a bad config
// fails at once anyway: ConfigError is permanent).
const { resolveBuildConfig, resolveEvalConfig } = proxyActivities<typeof activities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 10 },
});

export async function buildConfigInput(input: unknown): Promise<BuildConfig> {
  if (patched(CONFIG_RESOLVED_OUTSIDE_WORKFLOW)) return resolved(() => resolveBuildConfig(input));
  const { parseBuildConfig } = await import(/* webpackMode: "eager" */ '../config/buildConfig.js');
  return failOnConfigError(() => parseBuildConfig(input));
}

export async function evalConfigInput(input: unknown): Promise<EvalConfig> {
  if (patched(CONFIG_RESOLVED_OUTSIDE_WORKFLOW)) return resolved(() => resolveEvalConfig(input));
  const { parseEvalConfig } = await import(/* webpackMode: "eager" */ '../config/evalConfig.js');
  return failOnConfigError(() => parseEvalConfig(input));
}

/** The resolved config of a version this code reads; a bad config fails the workflow with the activity's one line. */
async function resolved<T>(resolve: () => Promise<ResolvedConfig<T>>): Promise<T> {
  let spec: ResolvedConfig<T>;
  try {
    spec = await resolve();
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : undefined;
    if (cause instanceof ApplicationFailure && cause.type === 'ConfigError') throw ApplicationFailure.nonRetryable(cause.message, 'ConfigError');
    throw err;
  }
  if (!READ_CONFIG_VERSIONS.includes(spec.version)) {
    throw ApplicationFailure.nonRetryable(
      `resolved config version ${String(spec.version)} is not read by this worker (it reads ${READ_CONFIG_VERSIONS.join(', ')}): deploy the same version to every worker`,
      'ConfigError',
    );
  }
  return spec.config;
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
