/**
 * `mmif estimate`: forecasts a build's requests, tokens and cost before it runs, from a pilot build
 * of its first samples that shares the build's model cache (nothing is paid twice).
 */
import { parseFlags } from '../../config/commandFlags.js';
import { MAX_PILOT, pilotBuildId } from '../../config/buildIds.js';
import type { BuildConfig } from '../../config/buildConfig.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import { forecastBuild, formatForecast, fullBuildSamples, sampleCosts } from '../../output/reports/forecast.js';
import type { BuildPlan } from '../../pipeline/planning/planBuild.types.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { getJson } from '../../storage/objectStore.js';
import { openStore } from '../../storage/openStore.js';
import { rootFailure } from '../failures.js';
import { CliError, EXIT } from '../exitCodes.js';
import { withLocalTemporal } from '../localTemporal.js';
import { connectTemporal, type Temporal } from '../temporalClient.js';
import { readConfig } from '../configFile.js';
import { mmifCommand } from '../wording.js';

export const ESTIMATE_USAGE = `usage: mmif estimate --config FILE [--pilot N] [--json] [--local]
  Forecast what the build will cost before it runs: a pilot build of the first N samples of the
  build's own seeded order (default 50) runs on the task queue MMIF_TASK_QUEUE, its calls going into
  the build's model cache (the real build pays nothing for them again); from it, the full build's
  requests, input / cached-input / output tokens, USD with a 95% interval from the pilot's spread,
  and wall time, for the samples the config asks for (maxSamples, or what its targets need at the
  pilot's yield) with the pilot's per-sample figures, and a line saying what the sources hold when
  that is less. The pilot's dataset goes to <output>/_estimate/<buildId>-pilot-<N>/; its viewer is
  printed as a preview of the build's samples ("preview" in the JSON).
  --pilot N  pilot samples (default 50)
  --json     print only the forecast on stdout, as one JSON object (total USD under "usd"); every
             other line goes to stderr
  --local    run the pilot in this process: a Temporal dev server, a worker and (without
             OPENAI_BASE_URL) the simulator, as \`mmif build --local\``;

const DEFAULT_PILOT = 50;

export async function estimateCommand(args: string[]): Promise<number> {
  const { values } = parseFlags({ args, options: { config: { type: 'string' }, pilot: { type: 'string' }, json: { type: 'boolean' }, local: { type: 'boolean' } } });
  if (!values.config) throw new CliError(ESTIMATE_USAGE, EXIT.usage);
  const pilotSize = values.pilot === undefined ? DEFAULT_PILOT : Number(values.pilot);
  if (!Number.isInteger(pilotSize) || pilotSize < 1 || pilotSize > MAX_PILOT)
    throw new CliError(`--pilot must be an integer from 1 to ${MAX_PILOT}, got '${values.pilot}'`, EXIT.usage);
  const config = await readConfig(values.config);
  const json = values.json ?? false;
  const run = (temporal: Temporal) => estimate(temporal, config, pilotSize, json);
  // Under --json stdout carries the forecast alone: what --local and the pilot print goes to stderr.
  const log = console.log;
  if (json) console.log = console.error;
  try {
    if (values.local) return await withLocalTemporal(run, config);
    const temporal = await connectTemporal();
    try {
      return await run(temporal);
    } finally {
      await temporal.close();
    }
  } finally {
    console.log = log;
  }
}

/**
 * The pilot: the same config (same seed and sources, so the same seeded order and the same
 * requests) with its first `size` samples, under its own build id and output, sharing the build's
 * model cache. No targets (the forecast scales through the pilot's yield) and no budget.
 */
function pilotConfig(config: BuildConfig, size: number): BuildConfig {
  return {
    ...config,
    buildId: pilotBuildId(config.buildId, size),
    output: `${config.output.replace(/\/+$/, '')}/_estimate`,
    cacheUri: config.cacheUri ?? config.output,
    maxSamples: Math.min(size, config.maxSamples),
    targets: undefined,
    retryWindowSeconds: 0,
    llm: { ...config.llm, budget: undefined },
  };
}

async function estimate(temporal: Temporal, config: BuildConfig, size: number, json: boolean): Promise<number> {
  const pilot = pilotConfig(config, size);
  console.log(`pilot: ${pilot.maxSamples} samples of ${config.buildId} as build ${pilot.buildId} in ${pilot.output}`);
  const started = Date.now();
  const report = (await temporal.client.workflow
    .execute('buildDataset', { taskQueue: temporal.settings.taskQueue, workflowId: pilot.buildId, args: [pilot] })
    .catch((err: unknown) => {
      throw new CliError(`the pilot build ${pilot.buildId} failed: ${rootFailure(err).message}`, EXIT.failed);
    })) as BuildReport;
  const seconds = (Date.now() - started) / 1000;
  const store = openStore(pilot.output, pilot.s3);
  const layout = buildLayout(pilot.buildId);
  const plan = await getJson<BuildPlan>(store, layout.planSummary);
  if (!plan) throw new CliError(`the pilot build ${pilot.buildId} left no plan in ${pilot.output}`, EXIT.failed);
  const forecast = forecastBuild({ config, pilot: report, pilotSamples: await sampleCosts(store, layout), fullSamples: fullBuildSamples(config, plan, report), seconds });
  // The pilot's dataset is a preview of the build's: its viewer shows the samples the forecast is from.
  const preview = `${report.datasetRoot}/${layout.inDataset(layout.viewer)}`;
  if (json) process.stdout.write(`${JSON.stringify({ ...forecast, preview })}\n`);
  else console.log([...formatForecast(forecast), `preview: ${preview} (the pilot's samples; \`${mmifCommand(`view ${report.datasetRoot} --serve`)}\` serves it)`].join('\n'));
  return EXIT.ok;
}
