/**
 * The metrics address of `mmif worker` and `mmif build --local` (`--metrics`, else MMIF_METRICS_ADDR),
 * read as the commands' errors: a malformed one is a usage error (exit 2), one that cannot be bound
 * fails the command (exit 1), each in one line naming the setting.
 */
import { metricsAddressOf } from '../telemetry/metricsServer.js';
import { CliError, EXIT } from './exitCodes.js';

export function metricsAddressOrUsage(flag: string | undefined): { host: string; port: number } | undefined {
  try {
    return metricsAddressOf(flag);
  } catch (err) {
    throw new CliError((err as Error).message, EXIT.usage);
  }
}

/** A metrics server that did not start, as the command's failure. */
export const metricsFailed = (err: Error): never => {
  throw new CliError(err.message, EXIT.failed);
};
