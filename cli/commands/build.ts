import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { parseBuildConfig, type BuildConfig } from '../../config/buildConfig.js';
import { ConfigError } from '../../config/configError.js';
import { EndpointError } from '../../llm/endpointError.js';
import { preflight } from '../../llm/preflight.js';
import { recordPreflightUsage } from '../../output/preflightUsage.js';
import { buildLayout, LLM_CACHE_PREFIX } from '../../storage/buildLayout.js';
import { configFingerprint, type StoredConfig } from '../../pipeline/planBuild.js';
import { getJson } from '../../storage/objectStore.js';
import { openStore } from '../../storage/openStore.js';
import { CliError, EXIT } from '../exitCodes.js';
import { connectTemporal, type Temporal } from '../temporalClient.js';
import { withLocalTemporal } from '../localTemporal.js';
import { formatSummary } from '../summary.js';
import type { BuildReport } from '../../output/buildReport.js';
import { watch } from './status.js';

export const BUILD_USAGE = `usage: mmif build --config FILE [--wait] [--new-version]
  Start a build on the task queue MMIF_TASK_QUEUE (workflow id = the config's buildId).
  Re-running a build id skips its committed shards; a changed config is refused unless --new-version.
  First checks every endpoint + model with one tiny request (llm.preflight): a refused key, unknown
  model or text-only model exits 2 in seconds, naming the endpoint, model and status.
  --wait         show live progress until the build closes (exit 0 done, 1 failed)
  --new-version  when the build exists with another config, start <buildId>-v2 (or the next free version)
  --local        run it all in this process: a Temporal dev server, a worker and (without
                 OPENAI_BASE_URL) the simulator; waits, prints the summary, exits 1 when the build fails`;

export async function buildCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { config: { type: 'string' }, wait: { type: 'boolean' }, 'new-version': { type: 'boolean' }, local: { type: 'boolean' } },
  });
  if (!values.config) throw new CliError(BUILD_USAGE, EXIT.usage);
  let config = await readConfig(values.config);
  if (values['new-version']) config = await nextFreeVersion(config);
  // Local: the worker lives in this process, so the build is waited for; the simulator (started
  // first) is what the pre-flight checks when no endpoint is configured.
  if (values.local) return withLocalTemporal((temporal) => startBuild(temporal, config, { wait: true, summary: true }));
  const temporal = await connectTemporal();
  try {
    return await startBuild(temporal, config, { wait: values.wait ?? false, summary: false });
  } finally {
    await temporal.close();
  }
}

async function startBuild(temporal: Temporal, config: BuildConfig, options: { wait: boolean; summary: boolean }): Promise<number> {
  if (config.llm.preflight) await checkEndpoints(config);
  const handle = await temporal.client.workflow
    .start('buildDataset', { taskQueue: temporal.settings.taskQueue, workflowId: config.buildId, args: [config] })
    .catch((err: unknown) => {
      if (err instanceof WorkflowExecutionAlreadyStartedError) {
        throw new CliError(`build '${config.buildId}' is already running: see \`mmif status ${config.buildId}\``, EXIT.failed);
      }
      throw err;
    });
  console.log(`started build ${config.buildId} (run ${handle.firstExecutionRunId}) on task queue ${temporal.settings.taskQueue}`);
  if (!options.wait) return EXIT.ok;
  const code = await watch(handle, config.buildId);
  if (options.summary && code === EXIT.ok) console.log(`\n${formatSummary((await handle.result()) as BuildReport)}`);
  return code;
}

/**
 * The workflow runs the same pre-flight before planning; running it here first answers at once, and
 * what passed is remembered in the model cache, so the workflow makes no second request for it.
 */
async function checkEndpoints(config: BuildConfig): Promise<void> {
  try {
    const outcomes = await preflight(config, openStore(config.cacheUri ?? config.output, config.s3), LLM_CACHE_PREFIX);
    await recordPreflightUsage(openStore(config.output, config.s3), buildLayout(config.buildId), outcomes, config.llm.prices);
    for (const checked of outcomes) {
      const what = `${checked.endpoint} (model ${checked.model}${checked.withImage ? ', with an image' : ''})`;
      if (checked.unreachable) console.warn(`pre-flight: ${checked.unreachable}; starting anyway (its calls are retried)`);
      else console.log(`pre-flight: ${what} ok${checked.cached ? ' (checked before)' : ''}`);
      // What the endpoint was found to accept instead of the plain request (docs/endpoints.md).
      for (const lesson of checked.lessons ?? []) console.log(`pre-flight: ${checked.endpoint} (model ${checked.model}) ${lesson}`);
    }
  } catch (err) {
    if (err instanceof EndpointError) throw new CliError(`pre-flight failed: ${err.message}`, EXIT.usage);
    throw err;
  }
}

export async function readConfig(file: string): Promise<BuildConfig> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, 'utf8'));
  } catch (err) {
    throw new CliError(`cannot read build config ${file}: ${(err as Error).message}`, EXIT.usage);
  }
  try {
    return parseBuildConfig(json);
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(`${file}: ${err.message}`, EXIT.usage);
    throw err;
  }
}

/** The config itself when its build id is free or holds the same config; else the next `-vN` that is. */
async function nextFreeVersion(config: BuildConfig): Promise<BuildConfig> {
  const store = openStore(config.output, config.s3);
  const fingerprint = configFingerprint(config);
  const base = config.buildId.replace(/-v\d+$/, '');
  for (let version = 1; ; version++) {
    const buildId = version === 1 ? base : `${base}-v${version}`;
    const stored = await getJson<StoredConfig>(store, buildLayout(buildId).config);
    if (!stored || stored.configFingerprint === fingerprint) return { ...config, buildId };
  }
}
