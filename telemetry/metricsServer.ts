/**
 * One Prometheus scrape target per worker process (`mmif worker`, `build --local`) at MMIF_METRICS_ADDR or
 * `--metrics host:port`: GET /metrics answers the engine's metrics (telemetry/metrics.ts) followed by
 * the Temporal SDK's own (task queue polls, schedule-to-start latency, activity failures). The SDK
 * serves its metrics through `Runtime.install({ telemetryOptions: { metrics: { prometheus: { bindAddress }}}})`
 * (@temporalio/worker runtime-options.d.ts) on a port of its own: here a free loopback port that only
 * this server reads, so a scrape config names one target. A bare port binds 127.0.0.1; any other
 * interface must be named (`0.0.0.0:9464`).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Runtime, type RuntimeOptions } from '@temporalio/worker';
import { freePort } from '../local/temporalDevServer.js';
import { enableMetrics, scrapeEngineMetrics } from './metrics.js';

/** The interface a metrics address without one binds. */
const DEFAULT_HOST = '127.0.0.1';

/** `host:port`, `:port` or `port` (on DEFAULT_HOST); an IPv6 host in brackets. Throws naming the setting on anything else. */
export function parseMetricsAddress(raw: string, from: string): { host: string; port: number } {
  const match = /^(?:(\[[^\]]+\]|[^:[\]]*):)?(\d{1,5})$/.exec(raw.trim());
  const port = match ? Number(match[2]) : NaN;
  if (!match || port > 65535) throw new Error(`${from} must be host:port or a port (e.g. 127.0.0.1:9464), got '${raw}'`);
  return { host: match[1] ? match[1].replace(/^\[|\]$/g, '') : DEFAULT_HOST, port };
}

/** The metrics address a command was given: its `--metrics` flag, else MMIF_METRICS_ADDR, else none. */
export function metricsAddressOf(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): { host: string; port: number } | undefined {
  if (flag) return parseMetricsAddress(flag, '--metrics');
  if (env.MMIF_METRICS_ADDR) return parseMetricsAddress(env.MMIF_METRICS_ADDR, 'MMIF_METRICS_ADDR');
  return undefined;
}

interface MetricsServer {
  /** Where it listens, `host:port` (the port resolved when 0 was asked). */
  address: string;
  close(): Promise<void>;
}

/**
 * Installs the SDK runtime (with `runtime`'s other options: a logger, its log forwarding) exporting its metrics to a
 * loopback port, and serves both sets at `at`. Call before any Temporal connection of the process:
 * the runtime is installed once.
 */
export async function startMetricsServer(at: { host: string; port: number }, runtime: RuntimeOptions = {}): Promise<MetricsServer> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || !req.url?.startsWith('/metrics')) {
      res.writeHead(404).end('metrics are served at /metrics\n');
      return;
    }
    exposition(sdkPort).then(
      (text) => res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }).end(text),
      (err: Error) => res.writeHead(500).end(`${err.message}\n`),
    );
  });
  await listen(server, at).catch((err: NodeJS.ErrnoException) => {
    throw new Error(`cannot serve metrics on ${at.host}:${at.port}: ${err.code ?? err.message}`);
  });
  // A free loopback port (the OS picks it; the SDK binds it right after).
  const sdkPort = await freePort();
  try {
    Runtime.install({
      ...runtime,
      telemetryOptions: {
        ...runtime.telemetryOptions,
        metrics: { prometheus: { bindAddress: `${DEFAULT_HOST}:${sdkPort}`, countersTotalSuffix: true, unitSuffix: true, useSecondsForDurations: true } },
      },
    });
  } catch (err) {
    server.close();
    throw err;
  }
  enableMetrics();
  const { address, port } = server.address() as AddressInfo;
  return {
    address: `${address.includes(':') ? `[${address}]` : address}:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The engine's metrics, then the SDK's (its exporter answers once the runtime has started; until then only the engine's). */
async function exposition(sdkPort: number): Promise<string> {
  const engine = await scrapeEngineMetrics();
  const sdk = await fetch(`http://${DEFAULT_HOST}:${sdkPort}/metrics`).then(
    (r) => (r.ok ? r.text() : ''),
    () => '',
  );
  return `${engine}\n${sdk}`;
}

function listen(server: Server, at: { host: string; port: number }): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(at.port, at.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
