import { parseArgs } from 'node:util';
import type { WorkflowHandle } from '@temporalio/client';
import type { BuildReport } from '../../output/buildReport.js';
import type { BuildProgress } from '../../workflows/buildProgress.js';
import { CliError, EXIT } from '../exitCodes.js';
import { formatProgress } from '../progressView.js';
import { accountingLines, rerunHint } from '../summary.js';
import { connectTemporal, forBuild } from '../temporalClient.js';

export const STATUS_USAGE = `usage: mmif status <buildId> [--watch] [--json]
  Show a build's progress (shards, samples, rejections by reason, tokens per stage, throughput, ETA).
  --watch  refresh every 2 s until the build closes, then print each source's accounting (read =
           planned + not selected + filtered + problems; planned = accepted + held out + rejected +
           uncommitted); exit code
           0 done, 1 failed or cancelled
  --json   print the raw progress query result`;

export async function statusCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { watch: { type: 'boolean' }, json: { type: 'boolean' } } });
  const buildId = positionals[0];
  if (!buildId) throw new CliError(STATUS_USAGE, EXIT.usage);
  const temporal = await connectTemporal();
  try {
    const handle = temporal.client.workflow.getHandle(buildId);
    if (values.watch) return await watch(handle, buildId);
    const progress = await forBuild(buildId, () => handle.query<BuildProgress>('progress'));
    console.log(values.json ? JSON.stringify(progress, null, 2) : formatProgress(progress));
    return EXIT.ok;
  } finally {
    await temporal.close();
  }
}

/** Redraws the progress until the workflow closes; the exit code says how it ended. */
export async function watch(handle: WorkflowHandle, buildId: string): Promise<number> {
  const interactive = process.stdout.isTTY;
  for (;;) {
    const description = await forBuild(buildId, () => handle.describe());
    const progress = await handle.query<BuildProgress>('progress').catch(() => undefined);
    if (progress) {
      const screen = formatProgress(progress);
      process.stdout.write(interactive ? `\x1b[2J\x1b[H${screen}\n` : `${screen}\n`);
    }
    if (description.status.name !== 'RUNNING' && description.status.name !== 'CONTINUED_AS_NEW') {
      console.log(`build ${buildId}: ${description.status.name}`);
      if (description.status.name !== 'COMPLETED') return EXIT.failed;
      const report = (await handle.result()) as BuildReport;
      for (const line of accountingLines(report)) console.log(line);
      const rerun = rerunHint(report);
      if (rerun) console.log(rerun);
      return EXIT.ok;
    }
    await new Promise((r) => setTimeout(r, 2_000));
  }
}
