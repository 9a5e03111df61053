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

export const ESTIMATE_USAGE = `usage: mmif estimate --config FILE [--pilot N] [--json] [--local]
  Forecast what the build will cost before it runs: a pilot build of the first N samples of the
  build's own seeded order (default 50) runs on the task queue MMIF_TASK_QUEUE, its calls going into
  the build's model cache (the real build pays nothing for them again); from it, the full build's
  requests, input / cached-input / output tokens, USD with a 95% interval from the pilot's spread,
  and wall time. The pilot's dataset goes to <output>/_estimate/<buildId>-pilot-<N>/.
  --pilot N  pilot samples (default 50)
  --json     print the forecast as one JSON object (total USD under "usd")
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
  const run = (temporal: Temporal) => estimate(temporal, config, pilotSize, values.json ?? false);
  if (values.local) return withLocalTemporal(run, config);
  const temporal = await connectTemporal();
  try {
    return await run(temporal);
  } finally {
    await temporal.close();
  }
}

/**
 * The pilot: the same config (same seed and sources, so the same seeded order and the same
 * requests) with its first `size` samples, under its own build id and output, sharing the build's
 * model cache. No targets (the forecast scales through the pilot's yield) and no budget.
 */
export function pilotConfig(config: BuildConfig, size: number): BuildConfig {
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
  if (!json) console.log(`pilot: ${pilot.maxSamples} samples of ${config.buildId} as build ${pilot.buildId} in ${pilot.output}`);
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
  console.log(json ? JSON.stringify(forecast) : formatForecast(forecast).join('\n'));
  return EXIT.ok;
}
