/**
 * Temporal connection settings from the environment, under the names Temporal's own CLI reads, so
 * one set of variables serves `temporal` and `mmif` alike. Secrets (API key, TLS keys) never leave
 * the environment and files they point to.
 */
import { readFileSync } from 'node:fs';
import type { TLSConfig } from '@temporalio/client';

export interface TemporalSettings {
  /** Accepted by both Connection.connect (client) and NativeConnection.connect (worker). */
  connection: { address: string; tls?: TLSConfig; apiKey?: string };
  namespace: string;
  taskQueue: string;
}

export function temporalSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): TemporalSettings {
  const apiKey = env.TEMPORAL_API_KEY || undefined;
  const certPath = env.TEMPORAL_TLS_CLIENT_CERT_PATH;
  const keyPath = env.TEMPORAL_TLS_CLIENT_KEY_PATH;
  if (Boolean(certPath) !== Boolean(keyPath)) {
    throw new Error('TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH must be set together');
  }
  const caPath = env.TEMPORAL_TLS_SERVER_CA_CERT_PATH;
  const tlsWanted = isTrue(env.TEMPORAL_TLS) || Boolean(certPath) || Boolean(caPath) || Boolean(apiKey);
  const tls =
    tlsWanted && !isFalse(env.TEMPORAL_TLS)
      ? {
          serverNameOverride: env.TEMPORAL_TLS_SERVER_NAME || undefined,
          serverRootCACertificate: caPath ? readFileSync(caPath) : undefined,
          clientCertPair: certPath && keyPath ? { crt: readFileSync(certPath), key: readFileSync(keyPath) } : undefined,
        }
      : undefined;
  return {
    connection: { address: env.TEMPORAL_ADDRESS || 'localhost:7233', tls, apiKey },
    namespace: env.TEMPORAL_NAMESPACE || 'default',
    taskQueue: env.MMIF_TASK_QUEUE || 'mmif',
  };
}

const isTrue = (v: string | undefined) => v !== undefined && ['1', 'true', 'yes'].includes(v.toLowerCase());
const isFalse = (v: string | undefined) => v !== undefined && ['0', 'false', 'no'].includes(v.toLowerCase());
