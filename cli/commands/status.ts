/**
 * `mmif status`: shows a build's progress, spend and failures (once, or live with --watch), or the
 * list of evals, each failure in one line.
 */
import { TemporalFollower } from '../temporalOutage.js';
import { parseFlags } from '../../config/commandFlags.js';
import { datasetRootOf, paidSpend } from '../../output/reports/buildReport.js';
import { parseBuildConfig } from '../../config/buildConfig.js';
import type { Spend } from '../../llm/spendLedger.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import type { EvalSummary } from '../../output/reports/evalOutputs.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { getJson } from '../../storage/objectStore.js';
import { openStore } from '../../storage/openStore.js';
import { acceptedNothing, BuildRun, closedPhase, noWorkerLine } from '../buildRun.js';
import { CliError, EXIT, exitCodesLine } from '../exitCodes.js';
import { isDatasetRoot, LOCAL_RECORD_HINT, readLocalRecord, readLocalRecordAt, type LocalBuildRecord } from '../localRecord.js';
import { rootFailure } from '../failures.js';
import { formatProgress, sampleRate } from '../progressView.js';
import { accountingLines, formatSummary, rerunHint } from '../summary.js';
import { connectTemporal, type Temporal } from '../temporalClient.js';

export const STATUS_USAGE = `usage: mmif status <buildId> [--watch] [--json]
       mmif status <output>/<buildId>
       mmif status --evals [--json]
  Show a build's progress (shards, samples, the running shards' samples through each stage,
  requests/s and the share of the endpoints' limit, model-call errors by class, rejections by
  reason, tokens per model role, throughput over the last minutes, ETA).
  --evals  list the evaluations (mmif eval) on the Temporal server instead: eval id, status, prompt
           form, headline figure and report files of each finished one
  A closed build shows how it ended: done, or failed / cancelled with its cause on one line. A --local build whose server
  is gone is read from what the run recorded (.mmif/local-builds/ in the folder it ran in: run
  status there or in a folder below it; or, from any folder, give its dataset root, <output>/<buildId>,
  beside which the record is kept too) and its build-report.json.
  --watch  refresh every 2 s until the build closes, then print each source's accounting (read =
           planned + not selected + filtered + problems; planned = accepted + held out + rejected +
           uncommitted)
  --json   print the raw progress query result, with the running shards' (shardsLive) and the
           sample rate and ETA the screen shows (rate: samplesPerMinute, etaSeconds)
  ${exitCodesLine({
    ok: 'done, or running (without --watch)',
    failed: 'failed or cancelled',
    usage: 'a bad flag, or a build that failed for a config, data path, output or endpoint setting',
    notFound: 'no such build',
  })}`;

/** How long an open build may go unanswered before watching says no worker polls its queue (a worker starting up polls within seconds). */
const NO_WORKER_AFTER_MS = 10_000;

/** A --local build's server is gone once the command ends: a short wait, not the usual 10 s, says so. */
const LOCAL_CONNECT_TIMEOUT_MS = 1_500;

export async function statusCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags({ args, allowPositionals: true, options: { watch: { type: 'boolean' }, json: { type: 'boolean' }, evals: { type: 'boolean' } } });
  const buildId = positionals[0];
  if (values.evals) return listEvals(values.json ?? false);
  if (!buildId) throw new CliError(STATUS_USAGE, EXIT.usage);
  if (isDatasetRoot(buildId)) {
    const record = await readLocalRecordAt(buildId);
    if (!record) throw new CliError(`no record of a --local run in ${buildId} (_work/local-run.json): give a build's dataset root, or its buildId to ask Temporal`, EXIT.notFound);
    return localStatus(record);
  }
  const local = await readLocalRecord(buildId);
  let temporal: Temporal;
  try {
    temporal = await connectTemporal(local ? { connectTimeoutMs: LOCAL_CONNECT_TIMEOUT_MS } : {});
  } catch (err) {
    if (local) return localStatus(local);
    if (err instanceof CliError) throw new CliError(`${err.message}; ${LOCAL_RECORD_HINT(buildId)}`, err.exitCode);
    throw err;
  }
  try {
    const run = new BuildRun(temporal.client, buildId);
    if (values.watch) {
      await watch(run, { address: temporal.settings.connection.address });
      return EXIT.ok;
    }
    const description = await run.describe().catch((err: unknown) => {
      if (local && err instanceof CliError && err.exitCode === EXIT.notFound) return undefined;
      throw err;
    });
    if (!description) return localStatus(local!);
    const progress = await run.progress();
    const phase = closedPhase(description.status.name);
    if (progress) {
      const shown = phase ? { ...progress, phase } : progress;
      const now = Date.now();
      const paid = values.json ? undefined : await (await spendReader(run))();
      console.log(values.json ? JSON.stringify({ ...shown, rate: sampleRate(shown, now) }, null, 2) : formatProgress(shown, now, paid ? { paid } : {}));
    } else {
      console.log(`${buildId} ${phase ?? description.status.name.toLowerCase()} (no worker answered the progress query)`);
      if (!phase && !(await run.hasWorker(description))) console.error(noWorkerLine(description.taskQueue));
    }
    if (phase) {
      const report = await run.report(description);
      const empty = acceptedNothing(buildId, report);
      if (empty) throw empty;
    }
    return EXIT.ok;
  } finally {
    await temporal.close();
  }
}

/**
 * Reads what every paid request of the build came to so far, committed or not: its spend ledger, in
 * the output named by the config it was started with (found once); undefined when that cannot be read here.
 */
async function spendReader(run: BuildRun): Promise<() => Promise<Spend | undefined>> {
  const config = await run
    .startedConfig()
    .then(parseBuildConfig)
    .catch(() => undefined);
  return async () => {
    try {
      return config && (await paidSpend(openStore(config.output, config.s3), buildLayout(config.buildId)));
    } catch {
      // An output this machine cannot read (another host's disk, no S3 credentials here): the progress above stands.
      return undefined;
    }
  };
}

/**
 * Redraws the progress of the run followed until it closes; resolves with its report when it
 * completed, else throws its one line (RunEnded) with the exit code. `local`: a `build --local` run,
 * whose caller prints the whole summary next (the accounting, the cost, the re-run hint): the closed
 * run's last screen is left out, so the cost is printed once, with one total. A Temporal server that
 * stops answering (`address`) is waited for, saying so (cli/temporalOutage.ts): the run's outcome is
 * what ends the watch, not the connection's.
 */
export async function watch(run: BuildRun, options: { address: string; local?: boolean }): Promise<BuildReport> {
  const interactive = process.stdout.isTTY;
  const since = Date.now();
  const temporal = new TemporalFollower(options.address);
  const paidSoFar = await spendReader(run);
  let toldNoWorker = false;
  for (;;) {
    const description = await temporal.call(() => run.describe());
    const progress = await run.progress();
    const phase = closedPhase(description.status.name);
    // An open run whose progress no worker answers for a while: say so once, rather than wait silently.
    if (!phase && !progress && !toldNoWorker && Date.now() - since >= NO_WORKER_AFTER_MS && !(await temporal.call(() => run.hasWorker(description)))) {
      toldNoWorker = true;
      console.error(noWorkerLine(description.taskQueue));
    }
    if (progress && !(phase && options.local)) {
      const paid = await paidSoFar();
      const screen = formatProgress(phase ? { ...progress, phase } : progress, Date.now(), { local: options.local ?? false, ...(paid ? { paid } : {}) });
      process.stdout.write(interactive ? `\x1b[2J\x1b[H${screen}\n` : `${screen}\n`);
    }
    if (phase) {
      const report = await temporal.call(() => run.report(description));
      console.log(`build ${run.buildId}: COMPLETED`);
      if (options.local) return report;
      for (const line of accountingLines(report)) console.log(line);
      const rerun = rerunHint(report);
      if (rerun) console.log(rerun);
      const empty = acceptedNothing(run.buildId, report);
      if (empty) throw empty;
      return report;
    }
    await new Promise((r) => setTimeout(r, 2_000));
  }
}

/** A --local build with no server left: how the run ended (its record) and its figures (build-report.json). */
async function localStatus(record: LocalBuildRecord): Promise<number> {
  const store = openStore(record.output, record.s3);
  const layout = buildLayout(record.buildId);
  const stored = await getJson<BuildReport>(store, layout.report);
  // The stored report names its dataset relative to itself: here, where it is.
  const report = stored && { ...stored, datasetRoot: datasetRootOf(store, layout) };
  const phase = closedPhase(record.status) ?? record.status.toLowerCase();
  console.log(`${record.buildId} ${phase} (a --local build, ended ${record.finishedAt}; its Temporal server is gone)`);
  if (report) console.log(formatSummary(report, { s3Endpoint: record.s3.endpoint, local: true }));
  if (record.failure) throw new CliError(record.failure, record.exitCode);
  return record.exitCode;
}

/** The statuses of a run that has a result to read (a summary or a failure) without waiting. */
const CLOSED: ReadonlySet<string> = new Set(['COMPLETED', 'FAILED', 'CANCELLED', 'TERMINATED', 'TIMED_OUT']);

/** One line per evaluation workflow (type evaluateModel); a finished one with its prompt form, figure and reports. */
async function listEvals(json: boolean): Promise<number> {
  const temporal = await connectTemporal();
  try {
    const rows: Array<{ evalId: string; status: string; started: string; summary?: EvalSummary; cause?: string }> = [];
    for await (const execution of temporal.client.workflow.list({ query: "WorkflowType = 'evaluateModel'" })) {
      const status = execution.status.name;
      const row = { evalId: execution.workflowId.replace(/^eval-/, ''), status, started: execution.startTime.toISOString() };
      if (!CLOSED.has(status)) {
        rows.push(row);
        continue;
      }
      // A closed eval's result: its summary, or why it did not finish (one line, as `build --wait` prints a failed build's).
      const outcome = await temporal.client.workflow
        .getHandle(execution.workflowId, execution.runId)
        .result()
        .then(
          (summary: unknown) => ({ summary: summary as EvalSummary }),
          (err: unknown) => ({ cause: rootFailure(err).message }),
        );
      rows.push({ ...row, ...outcome });
    }
    if (json) {
      console.log(JSON.stringify(rows, null, 2));
      return EXIT.ok;
    }
    if (rows.length === 0) console.log('no evaluations on this Temporal server');
    for (const r of rows) {
      const s = r.summary;
      const figure = s
        ? `${s.mode === 'multi-turn' ? 'corpus PIF' : 'constraint-level accuracy'} ${s.headline === null ? '-' : s.headline.toFixed(3)}${s.simulated ? ' (SIMULATED)' : ''}`
        : '';
      const closed = s ? [`prompt ${s.prompt}`, figure, `reports ${s.files.join(', ')}`] : r.cause ? [`cause: ${r.cause}`] : [];
      console.log([`eval ${r.evalId}`, r.status, `started ${r.started}`, ...closed].join('  '));
    }
    return EXIT.ok;
  } finally {
    await temporal.close();
  }
}
