/**
 * `mmif resume`: retries a build's failed shards, through the running workflow's update or by
 * starting the closed build again with the config it was planned with.
 */
import { parseFlags } from '../../config/commandFlags.js';
import type { WorkflowHandle } from '@temporalio/client';
import { parseBuildConfig } from '../../config/buildConfig.js';
import { buildLayout } from '../../storage/buildLayout.js';
import type { StoredConfig } from '../../pipeline/planning/planBuild.types.js';
import { ConfigMismatchError } from '../../pipeline/planning/configMismatchError.js';
import { causeChain } from '../../domain/causeChain.js';
import { getJson } from '../../storage/objectStore.js';
import { openStore } from '../../storage/openStore.js';
import { CliError, EXIT } from '../exitCodes.js';
import { connectTemporal, forBuild } from '../temporalClient.js';
import { BuildRun, originalConfig } from '../buildRun.js';
import { writeBudget } from '../../llm/buildBudget.js';
import { readConfig } from '../configFile.js';
import { watch } from './status.js';

export const RESUME_USAGE = `usage: mmif resume <buildId> [--wait] [--config FILE]
  Retry the failed shards of a build. A running build (or one waiting in its retry window) gets the
  retryFailedShards update; a closed one is started again with its original config under the same
  id: committed shards are skipped, so only failed and unfinished shards run, and cached model calls
  are not paid again; committed shards holding samples rejected by model-call errors are re-opened
  and just those samples regenerated (llm.rerunModelCallRejects).
  --config FILE  resume with this config instead (the same build: only settings outside the
                 fingerprint may differ, e.g. a raised llm.budget)`;

export async function resumeCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags({ args, allowPositionals: true, options: { wait: { type: 'boolean' }, config: { type: 'string' } } });
  const buildId = positionals[0];
  if (!buildId) throw new CliError(RESUME_USAGE, EXIT.usage);
  const given = values.config === undefined ? undefined : await readConfig(values.config);
  if (given && given.buildId !== buildId) throw new CliError(`${values.config} is the config of build '${given.buildId}', not '${buildId}'`, EXIT.usage);
  const temporal = await connectTemporal();
  try {
    const handle = temporal.client.workflow.getHandle(buildId);
    const description = await forBuild(buildId, () => handle.describe());
    // The run to follow with --wait: the one updated, or the one this command starts.
    let runId = description.runId;
    if (description.status.name === 'RUNNING') {
      // The running build's workers read its budget again within a second (llm/buildBudget.ts).
      if (given) await writeBudget(openStore(given.output, given.s3), buildLayout(buildId).budget, given.llm.budget);
      const { retrying } = await temporal.client.workflow.getHandle(buildId, runId).executeUpdate<{ retrying: number[] }, []>('retryFailedShards');
      console.log(retrying.length ? `retrying shards ${retrying.join(', ')} of ${buildId}` : `${buildId} has no failed shard to retry`);
    } else {
      const config = given ?? (await configToResume(handle));
      const restarted = await temporal.client.workflow.start('buildDataset', {
        taskQueue: description.taskQueue,
        workflowId: buildId,
        args: [config],
      });
      runId = restarted.firstExecutionRunId;
      console.log(`restarted ${buildId} (was ${description.status.name}; run ${runId})`);
    }
    if (values.wait) await watch(new BuildRun(temporal.client, buildId, runId), { address: temporal.settings.connection.address });
    return EXIT.ok;
  } finally {
    await temporal.close();
  }
}

/**
 * The config the latest run was started with, unless that run was refused for a changed config:
 * then the config the build was planned with (stored beside its output), so resuming re-runs the
 * build rather than the refused change.
 */
async function configToResume(handle: WorkflowHandle): Promise<unknown> {
  const started = await originalConfig(handle);
  const refused = await handle.result().then(
    () => false,
    (err: unknown) => causeChain(err).some((c) => c.type === ConfigMismatchError.name),
  );
  if (!refused) return started;
  const config = parseBuildConfig(started);
  const stored = await getJson<StoredConfig>(openStore(config.output, config.s3), buildLayout(config.buildId).config);
  if (!stored) throw new CliError(`${handle.workflowId} was refused for a changed config and has no planned config to resume with`, EXIT.failed);
  console.log(`the last run of ${handle.workflowId} was refused for a changed config: resuming with the config it was planned with`);
  return stored.config;
}
