/** `mmif cancel`: cancels a running build by its id; committed shards stay valid. */
import { parseFlags } from '../../config/commandFlags.js';
import { CliError, EXIT } from '../exitCodes.js';
import { connectTemporal, forBuild } from '../temporalClient.js';

export const CANCEL_USAGE = `usage: mmif cancel <buildId>
  Cancel a build: running shards stop, committed shards stay valid, the build report is written.`;

export async function cancelCommand(args: string[]): Promise<number> {
  const { positionals } = parseFlags({ args, allowPositionals: true, options: {} });
  const buildId = positionals[0];
  if (!buildId) throw new CliError(CANCEL_USAGE, EXIT.usage);
  const temporal = await connectTemporal();
  try {
    await forBuild(buildId, () => temporal.client.workflow.getHandle(buildId).cancel());
    console.log(`cancellation requested for ${buildId}`);
    return EXIT.ok;
  } finally {
    await temporal.close();
  }
}
