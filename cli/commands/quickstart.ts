import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { startTemporalDevServer } from '../../local/temporalDevServer.js';
import type { BuildReport } from '../../output/buildReport.js';
import { startSimulator } from '../../simulator/server.js';
import { createWorker } from '../../worker/createWorker.js';
import type { BuildProgress } from '../../workflows/buildProgress.js';
import { CliError, EXIT } from '../exitCodes.js';
import { modelsFromEnv, quickstartConfig, SIMULATOR_MODEL } from '../quickstartConfig.js';
import { formatSummary } from '../summary.js';

export const QUICKSTART_USAGE = `usage: mmif quickstart [--out DIR] [--samples N] [--build-id ID]
  Start a local Temporal dev server, a worker and (unless OPENAI_BASE_URL is set) the simulator,
  build the bundled sample images into DIR (default ./out) and print a summary. What \`npm start\` runs.`;

export async function quickstartCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      out: { type: 'string', default: 'out' },
      samples: { type: 'string', default: '10' },
      'build-id': { type: 'string' },
    },
  });
  const maxSamples = Number(values.samples);
  if (!Number.isInteger(maxSamples) || maxSamples < 1) throw new CliError(`--samples must be a positive integer, got '${values.samples}'`, EXIT.usage);

  const simulator = process.env.OPENAI_BASE_URL ? undefined : await startSimulator({ seed: 7 });
  if (simulator) process.env.OPENAI_BASE_URL = simulator.url;
  const models = modelsFromEnv(process.env, simulator ? SIMULATOR_MODEL : 'gpt-4o-mini');
  const buildId = values['build-id'] ?? (simulator ? 'quickstart-sim' : `quickstart-${models.default.model.replace(/[^A-Za-z0-9._-]+/g, '-')}`);
  console.log(simulator ? `simulator: ${simulator.url} (answers will be SIMULATED)` : `model endpoint: ${process.env.OPENAI_BASE_URL}`);

  // The quickstart's screen is for the summary; worker lifecycle logs would bury it.
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const server = await startTemporalDevServer();
  console.log(`temporal dev server: ${server.address}`);
  const taskQueue = 'mmif-quickstart';
  const nativeConnection = await NativeConnection.connect({ address: server.address });
  const worker = await createWorker({ connection: nativeConnection, namespace: 'default', taskQueue });
  const connection = await Connection.connect({ address: server.address });
  try {
    const report = await worker.runUntil(async () => {
      const client = new Client({ connection });
      const config = quickstartConfig({ buildId, output: path.resolve(values.out!), maxSamples, models });
      const handle = await client.workflow.start('buildDataset', { taskQueue, workflowId: buildId, args: [config] });
      const ticker = setInterval(async () => {
        const p = await handle.query<BuildProgress>('progress').catch(() => undefined);
        if (p) console.log(`  ${p.phase}: shards ${p.shards.committed}/${p.shards.planned} committed, ${p.shards.running} running; samples ${p.samples.instruct} accepted, ${p.samples.rejectedSamples} rejected`);
      }, 2_000);
      try {
        return (await handle.result()) as BuildReport;
      } finally {
        clearInterval(ticker);
      }
    });
    console.log(`\n${formatSummary(report)}`);
    return report.shards.failed > 0 ? EXIT.failed : EXIT.ok;
  } finally {
    await connection.close();
    await nativeConnection.close();
    await server.stop();
    await simulator?.close();
  }
}
