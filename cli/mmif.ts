#!/usr/bin/env node
/**
 * The `mmif` command. Subcommands:
 *   quickstart   build the bundled samples into ./out on a local dev server (what `npm start` runs)
 *   worker       run a worker against the Temporal server named by TEMPORAL_* env variables
 *   simulator    serve the OpenAI-compatible simulator (SIM_* env variables)
 *   verify       run the rule-based verifiers over JSON lines (stdin -> stdout)
 */
import { parseArgs } from 'node:util';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { startSimulator, simulatorOptionsFromEnv } from '../simulator/server.js';
import { startTemporalDevServer } from '../local/temporalDevServer.js';
import { createWorker } from '../worker/createWorker.js';
import { temporalSettingsFromEnv } from '../worker/connectionFromEnv.js';
import type { BuildProgress } from '../workflows/buildDataset.js';
import type { BuildReport } from '../output/buildReport.js';
import { modelsFromEnv, quickstartConfig, SIMULATOR_MODEL } from './quickstartConfig.js';
import { formatSummary } from './summary.js';
import { runVerifyCommand, VERIFY_USAGE } from '../verification/verifyCommand.js';

const USAGE = `usage: mmif <command> [options]

commands:
  quickstart [--out DIR] [--samples N] [--build-id ID]
      Start a local Temporal dev server, a worker and (unless OPENAI_BASE_URL is set) the simulator,
      build the bundled sample images into DIR (default ./out) and print a summary.
  worker
      Run a worker. Connects with TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS*;
      polls the task queue MMIF_TASK_QUEUE (default "mmif").
  simulator [--port N]
      Serve the OpenAI-compatible simulator on 127.0.0.1 (SIM_PORT, SIM_SEED, SIM_LATENCY_MS, SIM_RATE_*).
  verify [--records]
      Verify responses with the reference rule functions, one JSON line in, one out:
${VERIFY_USAGE.split('\n').slice(1).map((l) => `    ${l}`).join('\n')}`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'quickstart':
      return quickstart(rest);
    case 'worker':
      return runWorker(rest);
    case 'simulator':
      return runSimulator(rest);
    case 'verify':
      return runVerifyCommand(rest, process.stdin, process.stdout);
    case undefined:
    case '--help':
    case '-h':
    case 'help':
      process.stdout.write(USAGE);
      return command === undefined ? 2 : 0;
    default:
      process.stderr.write(`mmif: unknown command '${command}'\n${USAGE}`);
      return 2;
  }
}

async function quickstart(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      out: { type: 'string', default: 'out' },
      samples: { type: 'string', default: '10' },
      'build-id': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return void process.stdout.write(USAGE), 0;
  const maxSamples = Number(values.samples);
  if (!Number.isInteger(maxSamples) || maxSamples < 1) throw new Error(`--samples must be a positive integer, got '${values.samples}'`);

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
    return report.shards.failed > 0 ? 1 : 0;
  } finally {
    await connection.close();
    await nativeConnection.close();
    await server.stop();
    await simulator?.close();
  }
}

async function runWorker(args: string[]): Promise<number> {
  parseArgs({ args, options: {} });
  const settings = temporalSettingsFromEnv();
  const connection = await NativeConnection.connect(settings.connection);
  const worker = await createWorker({ connection, namespace: settings.namespace, taskQueue: settings.taskQueue });
  console.log(`worker polling task queue '${settings.taskQueue}' on ${settings.connection.address} (namespace ${settings.namespace})`);
  await worker.run(); // returns after SIGINT/SIGTERM: the SDK shuts the worker down gracefully
  await connection.close();
  return 0;
}

async function runSimulator(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { port: { type: 'string' } } });
  const options = simulatorOptionsFromEnv();
  const sim = await startSimulator({ ...options, port: values.port ? Number(values.port) : options.port });
  console.log(`mmif simulator (all replies are SIMULATED) listening on ${sim.url}`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await sim.close();
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`mmif: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
