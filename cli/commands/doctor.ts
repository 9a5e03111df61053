/**
 * `mmif doctor`: what a worker needs, checked from where it would run, one line each: the Temporal
 * connection and namespace (with the profile the settings came from), the task queue's pollers,
 * with a config each endpoint's pre-flight (llm/preflight.ts, into a throw-away cache so nothing of
 * the build's is marked checked) and the output's write probe, the metrics address, and the tools on
 * PATH. Each check runs whatever the others found, so one run names every problem.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { parseFlags } from '../../config/commandFlags.js';
import type { BuildConfig } from '../../config/buildConfig.js';
import { preflight } from '../../llm/preflight.js';
import { temporalCliPath } from '../../local/tools.js';
import { LocalStore } from '../../storage/localStore.js';
import { openStore } from '../../storage/openStore.js';
import { probeOutput } from '../../storage/outputProbe.js';
import { metricsAddressOf } from '../../telemetry/metricsServer.js';
import { temporalSettingsFromEnv } from '../../worker/connectionFromEnv.js';
import { hasPollers } from '../buildRun.js';
import { readConfig } from '../configFile.js';
import { EXIT, exitCodesLine } from '../exitCodes.js';
import { nothingListens, temporalUnreachable } from '../temporalClient.js';

export const DOCTOR_USAGE = `usage: mmif doctor [--config FILE]
  Check what a worker needs, one line each: the Temporal connection and namespace (TEMPORAL_*, or
  the TEMPORAL_PROFILE of temporal.toml), the task queue MMIF_TASK_QUEUE's pollers, the metrics
  address (MMIF_METRICS_ADDR) and the tools on PATH; with --config also every endpoint + model of
  the config (one tiny request each, as the build's pre-flight) and the output's write probe.
  ${exitCodesLine({ ok: 'every check passed', failed: 'a check failed (its line says FAIL)', usage: 'a bad flag or config' })}`;

type Verdict = 'ok' | 'FAIL' | 'note';
interface Line {
  verdict: Verdict;
  what: string;
}

/** How long the Temporal check waits for a server that does not answer. */
const CONNECT_TIMEOUT_MS = 5_000;

export async function doctorCommand(args: string[]): Promise<number> {
  const { values } = parseFlags({ args, options: { config: { type: 'string' } } });
  const config = values.config ? await readConfig(values.config) : undefined;
  const lines = [...(await temporalChecks()), ...(config ? await configChecks(config) : []), await metricsCheck(), toolsCheck()];
  for (const { verdict, what } of lines) console.log(`${verdict.padEnd(4)} ${what}`);
  return lines.some((l) => l.verdict === 'FAIL') ? EXIT.failed : EXIT.ok;
}

const failed = (err: unknown) => (err instanceof Error ? err.message : String(err));

async function temporalChecks(): Promise<Line[]> {
  let settings;
  try {
    settings = temporalSettingsFromEnv();
  } catch (err) {
    return [{ verdict: 'FAIL', what: `temporal: ${failed(err)}` }];
  }
  const from = settings.profile ? ` (${settings.profile})` : '';
  const nobody = await nothingListens(settings.connection.address);
  if (nobody) return [{ verdict: 'FAIL', what: `temporal: cannot reach Temporal at ${settings.connection.address}${from}: ${nobody}` }];
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({ ...settings.connection, connectTimeout: CONNECT_TIMEOUT_MS });
    await connection.workflowService.describeNamespace({ namespace: settings.namespace });
  } catch (err) {
    await connection?.close();
    return [{ verdict: 'FAIL', what: `temporal: ${temporalUnreachable(settings, err as Error).message}` }];
  }
  try {
    const client = new Client({ connection, namespace: settings.namespace });
    const polled = await hasPollers(client, settings.taskQueue);
    return [
      { verdict: 'ok', what: `temporal: ${settings.connection.address}, namespace ${settings.namespace}${from}` },
      polled
        ? { verdict: 'ok', what: `task queue '${settings.taskQueue}': workers poll it` }
        : { verdict: 'note', what: `task queue '${settings.taskQueue}': no worker polls it (yet): builds wait until one does` },
    ];
  } catch (err) {
    return [{ verdict: 'FAIL', what: `task queue '${settings.taskQueue}': ${failed(err)}` }];
  } finally {
    await connection.close();
  }
}

async function configChecks(config: BuildConfig): Promise<Line[]> {
  const lines: Line[] = [];
  const cacheDir = await mkdtemp(path.join(tmpdir(), 'mmif-doctor-'));
  try {
    const outcomes = await preflight(config, new LocalStore(cacheDir), 'doctor');
    for (const o of outcomes) {
      const target = `endpoint ${o.endpoint} (model ${o.model}; ${o.stages.join(', ')})`;
      lines.push(o.unreachable ? { verdict: 'FAIL', what: `${target}: ${o.unreachable}` } : { verdict: 'ok', what: `${target}: answers${o.withImage ? ' with an image' : ''}` });
    }
  } catch (err) {
    lines.push({ verdict: 'FAIL', what: `endpoints: ${failed(err)}` });
  } finally {
    await rm(cacheDir, { recursive: true, force: true });
  }
  try {
    await probeOutput(openStore(config.output, config.s3));
    lines.push({ verdict: 'ok', what: `output ${config.output}: writable` });
  } catch (err) {
    lines.push({ verdict: 'FAIL', what: `output: ${failed(err)}` });
  }
  return lines;
}

async function metricsCheck(): Promise<Line> {
  let at;
  try {
    at = metricsAddressOf(undefined);
  } catch (err) {
    return { verdict: 'FAIL', what: `metrics: ${failed(err)}` };
  }
  if (!at) return { verdict: 'note', what: 'metrics: not served (MMIF_METRICS_ADDR is unset)' };
  const where = `${at.host}:${at.port}`;
  const bound = await new Promise<string | undefined>((resolve) => {
    const probe = createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    probe.listen(at.port, at.host, () => probe.close(() => resolve(undefined)));
  });
  return bound ? { verdict: 'FAIL', what: `metrics: cannot bind ${where} (MMIF_METRICS_ADDR): ${bound}` } : { verdict: 'ok', what: `metrics: ${where} is free to serve /metrics` };
}

/** The tools a worker's commands start: the Temporal CLI, for `build --local` and `quickstart` only. */
function toolsCheck(): Line {
  const cli = temporalCliPath();
  const found = path.isAbsolute(cli) ? existsSync(cli) && cli : onPath(cli);
  return found
    ? { verdict: 'ok', what: `tools: temporal CLI at ${found}` }
    : {
        verdict: 'note',
        what: `tools: no temporal CLI (TEMPORAL_CLI_PATH, tools/venv or PATH): only \`mmif build --local\` and \`mmif quickstart\` need it (npm install puts it in tools/)`,
      };
}

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) if (dir && existsSync(path.join(dir, name))) return path.join(dir, name);
  return undefined;
}
