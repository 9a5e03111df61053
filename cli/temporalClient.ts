/**
 * The CLI's connection to Temporal, from the same TEMPORAL_* variables Temporal's own CLI reads,
 * and a fast answer when nothing listens at the address instead of gRPC's late, causeless timeout.
 */
import { connect } from 'node:net';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { temporalSettingsFromEnv, type TemporalSettings } from '../worker/connectionFromEnv.js';
import { maskingDataConverter } from '../worker/maskingPayloadCodec.js';
import { CliError, EXIT } from './exitCodes.js';
import { tracingClientInterceptors } from '../telemetry/tracing.js';

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
  const nobody = await nothingListens(settings.connection.address);
  if (nobody) throw new CliError(`cannot reach Temporal at ${settings.connection.address}${settings.profile ? ` (${settings.profile})` : ''}: ${nobody}`, EXIT.failed);
  const connectTimeout = options.connectTimeoutMs;
  const connection = await Connection.connect({ ...settings.connection, ...(connectTimeout ? { connectTimeout } : {}) }).catch((err: Error) => {
    throw temporalUnreachable(settings, err);
  });
  return {
    client: new Client({ connection, namespace: settings.namespace, dataConverter: maskingDataConverter, interceptors: tracingClientInterceptors() }),
    settings,
    close: () => connection.close(),
  };
}

/** Connection errors that say nothing listens at the address (or no such host): waiting cannot change them. */
const NOBODY_THERE: Record<string, string> = { ECONNREFUSED: 'Connection refused', ENOTFOUND: 'unknown host', EAI_AGAIN: 'unknown host' };

/**
 * Why nothing can answer at `host:port`, found with one TCP connection, or undefined when something
 * accepts it (or the check cannot tell within a second: a firewall dropping packets, a slow link).
 * The gRPC client retries a refused connection until its connect timeout (10 s) and then says only
 * "Failed to connect before the deadline"; this answers at once, with the cause.
 */
export function nothingListens(address: string): Promise<string | undefined> {
  const match = /^\[?([^\]]*?)\]?:(\d+)$/.exec(address);
  if (!match) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const socket = connect({ host: match[1], port: Number(match[2]) });
    const done = (why: string | undefined) => {
      socket.destroy();
      resolve(why);
    };
    socket.setTimeout(1_000, () => done(undefined));
    socket.once('connect', () => done(undefined));
    socket.once('error', (err: NodeJS.ErrnoException) => done(err.code && err.code in NOBODY_THERE ? NOBODY_THERE[err.code] : undefined));
  });
}

/**
 * The one line for a Temporal server that does not answer or refuses the settings, from the client
 * (`mmif build`, `status`, `doctor`) or a worker, naming the address, the profile the settings came
 * from (worker/connectionFromEnv.ts) and the cause (temporalCause).
 */
export function temporalUnreachable(settings: Pick<TemporalSettings, 'connection' | 'namespace' | 'profile'>, err: Error): CliError {
  const from = settings.profile ? ` (${settings.profile})` : '';
  return new CliError(`cannot reach Temporal at ${settings.connection.address}${from}: ${temporalCause(err, settings.namespace)}`, EXIT.failed);
}

/**
 * Why a connection or call failed, in words. A refused API key or certificate comes as gRPC status
 * 16 UNAUTHENTICATED (the client: `16 UNAUTHENTICATED: Request unauthorized.` in its cause; the worker's
 * native connection: `code: 'The request does not have valid authentication credentials', message:
 * "Request unauthorized."`); an unknown namespace as NOT_FOUND `Namespace <ns> is not found.`. The
 * worker's native transport errors are the Rust error's debug form,
 * `tonic::transport::Error(Transport, ConnectError(... Os { code: 111, kind: ConnectionRefused, message: "Connection refused" }))`:
 * its innermost `message` is the cause.
 */
function temporalCause(err: Error, namespace: string): string {
  const text = [err.message, err.cause instanceof Error ? err.cause.message : ''].join(' ');
  const message = /message: "([^"]+)"/.exec(text)?.[1];
  if (/UNAUTHENTICATED|valid authentication credentials/.test(text)) {
    return `credentials refused (${message ?? /UNAUTHENTICATED: ([^\n]+)/.exec(text)?.[1] ?? 'unauthenticated'}): check the API key (api_key, TEMPORAL_API_KEY) or client certificate`;
  }
  if (/Namespace \S+ (is|was) not found/.test(text)) return `namespace '${namespace}' not found (namespace, TEMPORAL_NAMESPACE)`;
  return message ?? (err.cause instanceof Error && err.message === 'Failed to connect to Temporal server' ? err.cause.message : err.message);
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
