/**
 * `mmif build`: starts a build from its config file on the task queue (or runs it here with --local)
 * and, with --wait, follows it to its summary. Its usage text is the help `mmif` prints.
 */
import { parseFlags } from '../../config/commandFlags.js';
import { MAX_VERSION, versionedBuildId } from '../../config/buildIds.js';
import { WorkflowExecutionAlreadyStartedError, type WorkflowHandle } from '@temporalio/client';
import type { BuildConfig } from '../../config/buildConfig.js';
import type { BuildCheckResult } from '../../workflows/buildChecks.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { configFingerprint } from '../../pipeline/planning/planBuild.js';
import type { StoredConfig } from '../../pipeline/planning/planBuild.types.js';
import { getJson } from '../../storage/objectStore.js';
import { openStore } from '../../storage/openStore.js';
import { readConfig } from '../configFile.js';
import { CliError, EXIT, exitCodesLine } from '../exitCodes.js';
import { connectTemporal, type Temporal } from '../temporalClient.js';
import { formatSummary } from '../summary.js';
import { acceptedNothing, BuildRun, hasPollers, RunEnded } from '../buildRun.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import { exitCodeFor, rootFailure } from '../failures.js';
import { recordedLocally } from '../localRecord.js';
import { watch } from './status.js';
import { retrySpanLine } from '../retrySpan.js';
import { inSpan } from '../../telemetry/tracing.js';
import { withOtlp } from '../../telemetry/otlp.js';

export const BUILD_USAGE = `usage: mmif build --config FILE [--wait | --local] [--new-version]
  Start a build on the task queue MMIF_TASK_QUEUE (workflow id = the config's buildId).
  Re-running a build id skips its committed shards; a changed config is refused unless --new-version.
  Relative paths in the config are read from the config file's folder and recorded absolute.
  First, on a worker of that task queue, runs \`mmif validate\`'s checks (config against an existing
  build, the sources' layouts, the output's write probe) and checks every endpoint + model with one tiny request
  (llm.preflight): a problem, a refused key, unknown model, text-only model, or a base URL that
  refuses the connection, names no known host or fails TLS exits 2 in seconds, naming what to fix;
  nothing is started.
  --wait         show live progress until the build closes, ending with the cause on one line when it fails
  --local        run it all in this process: a Temporal dev server, a worker and (without
                 OPENAI_BASE_URL, and only when a model role sets no baseUrl) the simulator; waits
                 with live progress and prints the summary
  --metrics HOST:PORT  with --local: serve the worker's Prometheus metrics there (default
                 MMIF_METRICS_ADDR; a bare port binds 127.0.0.1; docs/operations.md)
  --new-version  when the build exists with another config, start <buildId>-v2 (or the next free version)
  With OTEL_EXPORTER_OTLP_ENDPOINT set, the build's trace starts here and goes over OTLP (docs/operations.md).
  ${exitCodesLine({
    ok: 'started (without --wait or --local), or done',
    failed: 'the build failed or accepted nothing, or is already running',
    usage:
      'a bad flag or config, or a problem the checks found (nothing started); with --wait or --local also a build that failed for a config, data path, output or endpoint setting',
  })}`;

/** `mmif build`, its trace (and a --local worker's metrics) sent over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set (telemetry/otlp.ts). */
export function buildCommand(args: string[]): Promise<number> {
  return withOtlp('mmif', () => build(args));
}

async function build(args: string[]): Promise<number> {
  const { values } = parseFlags({
    args,
    options: { config: { type: 'string' }, wait: { type: 'boolean' }, 'new-version': { type: 'boolean' }, local: { type: 'boolean' }, metrics: { type: 'string' } },
  });
  if (!values.config) throw new CliError(BUILD_USAGE, EXIT.usage);
  if (values.metrics && !values.local) throw new CliError('--metrics serves the metrics of a --local build; a worker serves its own (mmif worker --metrics)', EXIT.usage);
  // The worker, its activities and the metrics server load only for --local: a plain `mmif build` is a client.
  const local = values.local ? await Promise.all([import('../localTemporal.js'), import('../metricsFlag.js')]) : undefined;
  const metricsAt = local?.[1].metricsAddressOrUsage(values.metrics);
  let config = await readConfig(values.config);
  if (values['new-version']) config = await nextFreeVersion(config);
  // Local: the worker lives in this process, so the build is waited for; the simulator (started
  // first) is what the pre-flight checks when no endpoint is configured.
  if (local)
    return local[0].withLocalTemporal(
      (temporal) => recordedLocally(config, () => startBuild(temporal, config, { wait: true, summary: true, localWorker: true })),
      config,
      metricsAt,
    );
  const temporal = await connectTemporal();
  try {
    return await startBuild(temporal, config, { wait: values.wait ?? false, summary: false });
  } finally {
    await temporal.close();
  }
}

/** The build's own span, the root of its trace: its checks, the build workflow and everything under them. */
function startBuild(temporal: Temporal, config: BuildConfig, options: { wait: boolean; summary: boolean; localWorker?: boolean }): Promise<number> {
  return inSpan(
    'mmif build',
    () => ({ 'mmif.build': config.buildId, 'mmif.mode': config.mode }),
    () => startAndWatch(temporal, config, options),
  );
}

async function startAndWatch(temporal: Temporal, config: BuildConfig, options: { wait: boolean; summary: boolean; localWorker?: boolean }): Promise<number> {
  await checkOnWorker(temporal, config, options.localWorker ?? false);
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
  // This run and its continuations only: another start under the same id is not ours to report.
  const summary = (report: BuildReport) => console.log(`\n${formatSummary(report, { s3Endpoint: config.s3?.endpoint, local: true })}`);
  const report = await watch(new BuildRun(temporal.client, config.buildId, handle.firstExecutionRunId), {
    address: temporal.settings.connection.address,
    local: options.summary,
  }).catch((err: unknown) => {
    // A budget stop: the summary says what was paid, what is kept and how to go on, before the one line.
    if (options.summary && err instanceof RunEnded && err.budgetStopped) summary(err.budgetStopped);
    throw err;
  });
  if (options.summary) summary(report);
  // After the summary, which shows where the samples went: a build that accepted nothing for its input's sake fails.
  const empty = acceptedNothing(config.buildId, report);
  if (empty) throw empty;
  return EXIT.ok;
}

/** How long `mmif build` waits for a worker to run the checks before leaving them to the build itself. */
const CHECKS_WAIT_MS = 120_000;
/** The checks workflow's id: beside the build's own (`<buildId>/shard-<n>` are its children), never equal to it. */
const checksWorkflowId = (buildId: string) => `${buildId}/checks`;

/**
 * The build's checks on a worker of its task queue (workflows/buildChecks.ts), where its data is read
 * and its calls are made: the config against an existing build, the sources' layouts, then the
 * endpoints (pre-flight, with that worker's `OPENAI_BASE_URL` and keys). A problem exits 2 and starts
 * no build. With no worker polling the queue, or none able to run the checks in time (an older
 * release), the build starts anyway: it checks its config, sources and endpoints itself first.
 */
async function checkOnWorker(temporal: Temporal, config: BuildConfig, localWorker: boolean): Promise<void> {
  const { client, settings } = temporal;
  // A --local worker runs in this process: it may not have polled yet, but it will.
  const polled = localWorker || (await hasPollers(client, settings.taskQueue));
  if (!polled) {
    console.warn(`checks: no worker polls task queue ${settings.taskQueue}; the build checks its config, sources and endpoints when a worker picks it up`);
    return;
  }
  const handle = await client.workflow.start('buildChecks', {
    taskQueue: settings.taskQueue,
    workflowId: checksWorkflowId(config.buildId),
    args: [config],
    workflowIdConflictPolicy: 'USE_EXISTING',
    // Bounded: a worker version without this workflow fails its tasks until then.
    workflowExecutionTimeout: CHECKS_WAIT_MS * 2,
  });
  let result: BuildCheckResult | 'late';
  try {
    result = await Promise.race([handle.result() as Promise<BuildCheckResult>, unableToRun(handle, CHECKS_WAIT_MS)]);
  } catch (err) {
    const failure = rootFailure(err);
    throw new CliError(`pre-flight failed: ${failure.message}`, exitCodeFor(failure));
  }
  if (result === 'late') {
    await handle.terminate('mmif build went on without it').catch(() => {});
    console.warn(
      `checks: the workers of task queue ${settings.taskQueue} did not run them within ${CHECKS_WAIT_MS / 1000} s (all busy, or a worker version without the checks); the build runs its own`,
    );
    return;
  }
  if (result.problems.length > 0) throw new CliError(`checks failed: ${result.problems.join('; ')}`, EXIT.usage);
  console.log(`checks: config, ${config.sources.length} source layout(s), output ok`);
  for (const checked of result.preflight ?? []) {
    const what = `${checked.endpoint} (model ${checked.model}${checked.withImage ? ', with an image' : ''})`;
    if (checked.unreachable) console.warn(`pre-flight: ${checked.unreachable}; starting anyway: its ${retrySpanLine(config)}`);
    else console.log(`pre-flight: ${what} ok${checked.cached ? ' (checked before)' : ''}`);
    // What the endpoint was found to accept instead of the plain request (docs/endpoints.md).
    for (const lesson of checked.lessons ?? []) console.log(`pre-flight: ${checked.endpoint} (model ${checked.model}) ${lesson}`);
  }
}

/**
 * Resolves 'late' when the checks cannot finish: `waitMs` passed, or its workflow task keeps failing
 * (a worker without the `buildChecks` type retries it every few seconds).
 */
async function unableToRun(handle: WorkflowHandle, waitMs: number): Promise<'late'> {
  const deadline = Date.now() + waitMs;
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 1_000));
    const description = await handle.describe().catch(() => undefined);
    if ((description?.raw.pendingWorkflowTask?.attempt ?? 0) > 2) return 'late';
  }
  return 'late';
}

/** The config itself when its build id is free or holds the same config; else the next `-vN` that is. */
async function nextFreeVersion(config: BuildConfig): Promise<BuildConfig> {
  const store = openStore(config.output, config.s3);
  const fingerprint = configFingerprint(config);
  const base = config.buildId.replace(/-v\d+$/, '');
  for (let version = 1; version <= MAX_VERSION; version++) {
    const buildId = versionedBuildId(base, version);
    const stored = await getJson<StoredConfig>(store, buildLayout(buildId).config);
    if (!stored || stored.configFingerprint === fingerprint) return { ...config, buildId };
  }
  throw new CliError(`build '${base}' has ${MAX_VERSION} versions in ${config.output}, each with another config: give the config a new buildId`, EXIT.usage);
}
