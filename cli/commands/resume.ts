import { parseArgs } from 'node:util';
import type { WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { CliError, EXIT } from '../exitCodes.js';
import { connectTemporal, forBuild } from '../temporalClient.js';
import { watch } from './status.js';

export const RESUME_USAGE = `usage: mmif resume <buildId> [--wait]
  Retry the failed shards of a build. A running build (or one waiting in its retry window) gets the
  retryFailedShards update; a closed one is started again with its original config under the same
  id: committed shards are skipped, so only failed and unfinished shards run, and cached model calls
  are not paid again; committed shards holding samples rejected by model-call errors are re-opened
  and just those samples regenerated (llm.rerunModelCallRejects).`;

export async function resumeCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { wait: { type: 'boolean' } } });
  const buildId = positionals[0];
  if (!buildId) throw new CliError(RESUME_USAGE, EXIT.usage);
  const temporal = await connectTemporal();
  try {
    const handle = temporal.client.workflow.getHandle(buildId);
    const description = await forBuild(buildId, () => handle.describe());
    if (description.status.name === 'RUNNING') {
      const { retrying } = await handle.executeUpdate<{ retrying: number[] }, []>('retryFailedShards');
      console.log(retrying.length ? `retrying shards ${retrying.join(', ')} of ${buildId}` : `${buildId} has no failed shard to retry`);
    } else {
      const config = await originalConfig(handle);
      const restarted = await temporal.client.workflow.start('buildDataset', {
        taskQueue: description.taskQueue,
        workflowId: buildId,
        args: [config],
      });
      console.log(`restarted ${buildId} (was ${description.status.name}; run ${restarted.firstExecutionRunId})`);
    }
    return values.wait ? await watch(temporal.client.workflow.getHandle(buildId), buildId) : EXIT.ok;
  } finally {
    await temporal.close();
  }
}

/** The config the latest run was started with: the first argument of its first history event. */
async function originalConfig(handle: WorkflowHandle): Promise<unknown> {
  const history = await handle.fetchHistory();
  const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  if (!payload) throw new CliError(`cannot find the config ${handle.workflowId} was started with`, EXIT.failed);
  return defaultPayloadConverter.fromPayload(payload);
}
