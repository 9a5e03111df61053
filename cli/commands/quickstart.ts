/**
 * `mmif quickstart` (what `npm start` runs): a local Temporal server, a worker and the simulator,
 * building the bundled samples end to end with nothing configured.
 */
import path from 'node:path';
import { parseFlags } from '../../config/commandFlags.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import type { BuildProgress } from '../../workflows/buildProgress.js';
import { CliError, EXIT } from '../exitCodes.js';
import { withLocalTemporal } from '../localTemporal.js';
import { recordedLocally } from '../localRecord.js';
import { BuildRun } from '../buildRun.js';
import type { Temporal } from '../temporalClient.js';
import type { BuildConfigInput } from '../../config/buildConfig.js';
import { modelsFromEnv, quickstartConfig, SIMULATOR_MODEL } from '../quickstartConfig.js';
import { formatSummary } from '../summary.js';

export const QUICKSTART_USAGE = `usage: mmif quickstart [--out DIR] [--samples N] [--build-id ID]
  Start a local Temporal dev server, a worker and (unless OPENAI_BASE_URL is set) the simulator,
  build the bundled sample images into DIR (default ./out) and print a summary. What \`npm start\` runs.`;

export async function quickstartCommand(args: string[]): Promise<number> {
  const { values } = parseFlags({
    args,
    options: {
      out: { type: 'string', default: 'out' },
      samples: { type: 'string', default: '10' },
      'build-id': { type: 'string' },
    },
  });
  const maxSamples = Number(values.samples);
  if (!Number.isInteger(maxSamples) || maxSamples < 1) throw new CliError(`--samples must be a positive integer, got '${values.samples}'`, EXIT.usage);

  // The same local stack as `mmif build --local` (cli/localTemporal.ts), with the bundled samples as
  // config; it starts the simulator exactly when no endpoint is set.
  const simulated = !process.env.OPENAI_BASE_URL;
  return withLocalTemporal(async (temporal) => {
    const models = modelsFromEnv(process.env, simulated ? SIMULATOR_MODEL : 'gpt-4o-mini');
    const buildId = values['build-id'] ?? (simulated ? 'quickstart-sim' : `quickstart-${models.default.model.replace(/[^A-Za-z0-9._-]+/g, '-')}`);
    const config = quickstartConfig({ buildId, output: path.resolve(values.out!), maxSamples, models });
    // Recorded as `build --local` records its builds: `mmif status <buildId>` after `npm start` finds it.
    return recordedLocally(config, () => runQuickstart(temporal, config));
  });
}

async function runQuickstart(temporal: Temporal, config: BuildConfigInput): Promise<number> {
  const { buildId } = config;
  const handle = await temporal.client.workflow.start('buildDataset', { taskQueue: temporal.settings.taskQueue, workflowId: buildId, args: [config] });
  // A timer ignores its callback's promise: the query's failure is caught here, a missed tick is harmless.
  const ticker = setInterval(() => {
    void handle
      .query<BuildProgress>('progress')
      .catch(() => undefined)
      .then((p) => {
        if (p)
          console.log(
            `  ${p.phase}: shards ${p.shards.committed}/${p.shards.planned} committed, ${p.shards.running} running; samples ${p.samples.instruct} accepted, ${p.samples.rejectedSamples} rejected`,
          );
      });
  }, 2_000);
  let report: BuildReport;
  try {
    // Closed (through its continue-as-new runs), then read as build --wait and status read it: the
    // same line and exit code (2 when every failed shard failed on an input error, cli/buildRun.ts).
    await handle.result().catch(() => undefined);
    const run = new BuildRun(temporal.client, buildId, handle.firstExecutionRunId);
    report = await run.report(await run.describe());
  } finally {
    clearInterval(ticker);
  }
  console.log(`\n${formatSummary(report)}`);
  return report.shards.failed > 0 ? EXIT.failed : EXIT.ok;
}
