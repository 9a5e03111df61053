import { parseArgs } from 'node:util';
import type { BuildReport } from '../../output/buildReport.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { getJson } from '../../storage/objectStore.js';
import { openStore } from '../../storage/openStore.js';
import { BuildRun, closedPhase } from '../buildRun.js';
import { CliError, EXIT } from '../exitCodes.js';
import { readLocalRecord, type LocalBuildRecord } from '../localRecord.js';
import { formatProgress } from '../progressView.js';
import { accountingLines, formatSummary, rerunHint } from '../summary.js';
import { connectTemporal, type Temporal } from '../temporalClient.js';

export const STATUS_USAGE = `usage: mmif status <buildId> [--watch] [--json]
  Show a build's progress (shards, samples, rejections by reason, tokens per stage, throughput, ETA).
  A closed build shows how it ended: done, or failed / cancelled with its cause on one line (exit 1;
  2 when the cause is a config, data path, output or endpoint setting). A --local build whose server
  is gone is read from what the run recorded (.mmif/local-builds/) and its build-report.json.
  --watch  refresh every 2 s until the build closes, then print each source's accounting (read =
           planned + not selected + filtered + problems; planned = accepted + held out + rejected +
           uncommitted); exit code
           0 done, 1 failed or cancelled
  --json   print the raw progress query result`;

/** A --local build's server is gone once the command ends: a short wait, not the usual 10 s, says so. */
const LOCAL_CONNECT_TIMEOUT_MS = 1_500;

export async function statusCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { watch: { type: 'boolean' }, json: { type: 'boolean' } } });
  const buildId = positionals[0];
  if (!buildId) throw new CliError(STATUS_USAGE, EXIT.usage);
  const local = await readLocalRecord(buildId);
  let temporal: Temporal;
  try {
    temporal = await connectTemporal(local ? { connectTimeoutMs: LOCAL_CONNECT_TIMEOUT_MS } : {});
  } catch (err) {
    if (local) return localStatus(local);
    throw err;
  }
  try {
    const run = new BuildRun(temporal.client, buildId);
    if (values.watch) {
      await watch(run);
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
      console.log(values.json ? JSON.stringify(shown, null, 2) : formatProgress(shown));
    } else console.log(`${buildId} ${phase ?? description.status.name.toLowerCase()} (no worker answered the progress query)`);
    if (phase) await run.report(description);
    return EXIT.ok;
  } finally {
    await temporal.close();
  }
}

/**
 * Redraws the progress of the run followed until it closes; resolves with its report when it
 * completed, else throws its one line (RunEnded) with the exit code.
 */
export async function watch(run: BuildRun): Promise<BuildReport> {
  const interactive = process.stdout.isTTY;
  for (;;) {
    const description = await run.describe();
    const progress = await run.progress();
    const phase = closedPhase(description.status.name);
    if (progress) {
      const screen = formatProgress(phase ? { ...progress, phase } : progress);
      process.stdout.write(interactive ? `\x1b[2J\x1b[H${screen}\n` : `${screen}\n`);
    }
    if (phase) {
      const report = await run.report(description);
      console.log(`build ${run.buildId}: COMPLETED`);
      for (const line of accountingLines(report)) console.log(line);
      const rerun = rerunHint(report);
      if (rerun) console.log(rerun);
      return report;
    }
    await new Promise((r) => setTimeout(r, 2_000));
  }
}

/** A --local build with no server left: how the run ended (its record) and its figures (build-report.json). */
async function localStatus(record: LocalBuildRecord): Promise<number> {
  const store = openStore(record.output, record.s3);
  const report = await getJson<BuildReport>(store, buildLayout(record.buildId).report);
  const phase = closedPhase(record.status) ?? record.status.toLowerCase();
  console.log(`${record.buildId} ${phase} (a --local build, ended ${record.finishedAt}; its Temporal server is gone)`);
  if (report) console.log(formatSummary(report));
  if (record.failure) throw new CliError(record.failure, record.exitCode);
  return record.exitCode;
}
