import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { temporalSettingsFromEnv, type TemporalSettings } from '../worker/connectionFromEnv.js';
import { CliError, EXIT } from './exitCodes.js';

export interface Temporal {
  client: Client;
  settings: TemporalSettings;
  close(): Promise<void>;
}

/**
 * A client for the server named by TEMPORAL_* variables (as Temporal's own CLI reads them).
 * `connectTimeoutMs` shortens the wait for a server that may be gone (after a `--local` build).
 */
export async function connectTemporal(options: { connectTimeoutMs?: number } = {}): Promise<Temporal> {
  const settings = temporalSettingsFromEnv();
  const connectTimeout = options.connectTimeoutMs;
  const connection = await Connection.connect({ ...settings.connection, ...(connectTimeout ? { connectTimeout } : {}) }).catch((err: Error) => {
    throw temporalUnreachable(settings.connection.address, err);
  });
  return { client: new Client({ connection, namespace: settings.namespace }), settings, close: () => connection.close() };
}

/**
 * The one line for a Temporal server that does not answer, from the client (`mmif build`, `status`)
 * or a worker. The worker's native connection fails with the Rust transport error's debug form,
 * `tonic::transport::Error(Transport, ConnectError(ConnectError("tcp connect error", 127.0.0.1:1,
 * Os { code: 111, kind: ConnectionRefused, message: "Connection refused" })))`: its innermost
 * `message` is the cause.
 */
export function temporalUnreachable(address: string, err: Error): CliError {
  const cause = /message: "([^"]+)"/.exec(err.message)?.[1] ?? err.message;
  return new CliError(`cannot reach Temporal at ${address}: ${cause}`, EXIT.failed);
}

/** Runs `work`, turning "no such workflow" into a one-line error with its exit code. */
export async function forBuild<T>(buildId: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) {
      // A build runs under its buildId (workflows/buildDataset.ts refuses another id); a schedule's
      // dated run under <buildId>@<date> (domain/buildWorkflowId.ts).
      throw new CliError(`no build '${buildId}' on this Temporal namespace (a schedule's run is known by <buildId>@<YYYY-MM-DD>)`, EXIT.notFound);
    }
    throw err;
  }
}
