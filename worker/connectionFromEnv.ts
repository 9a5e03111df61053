/**
 * Temporal connection settings as Temporal's own CLI reads them (one set serves `temporal` and
 * `mmif` alike): a profile of the environment-configuration file (`TEMPORAL_PROFILE`, default
 * `default`, of `TEMPORAL_CONFIG_FILE` or ~/.config/temporalio/temporal.toml: address, namespace,
 * api_key, tls with its certificates), overridden by the TEMPORAL_* variables, loaded by
 * @temporalio/envconfig (https://docs.temporal.io/develop/environment-configuration). Secrets
 * (API key, TLS keys, gRPC metadata) never leave the environment and the files it points to.
 */
import type { Metadata, TLSConfig } from '@temporalio/client';
import { loadClientConfigProfile, toClientOptions } from '@temporalio/envconfig';
import { markSecretValue } from '../config/secrets.js';

export interface TemporalSettings {
  /** Accepted by both Connection.connect (client) and NativeConnection.connect (worker). */
  connection: { address: string; tls?: TLSConfig | false; apiKey?: string; metadata?: Metadata };
  namespace: string;
  taskQueue: string;
  /** The profile named (TEMPORAL_PROFILE, or the default one of a TEMPORAL_CONFIG_FILE), for messages: `profile 'prod' of /path/temporal.toml`. */
  profile?: string;
}

export function temporalSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): TemporalSettings {
  if (Boolean(env.TEMPORAL_TLS_CLIENT_CERT_PATH) !== Boolean(env.TEMPORAL_TLS_CLIENT_KEY_PATH)) {
    throw new Error('TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH must be set together');
  }
  const file = env.TEMPORAL_CONFIG_FILE ? ` of ${env.TEMPORAL_CONFIG_FILE}` : '';
  const profile = env.TEMPORAL_PROFILE ? `profile '${env.TEMPORAL_PROFILE}'${file}` : file ? `profile 'default'${file}` : undefined;
  let loaded;
  try {
    loaded = toClientOptions(loadClientConfigProfile({ overrideEnvVars: env as Record<string, string> }));
  } catch (err) {
    throw new Error(`Temporal ${profile ?? 'settings'}: ${(err as Error).message}`);
  }
  const { address, apiKey, tls, metadata } = loaded.connectionOptions;
  // What a profile gives besides the variables (config/secrets.ts masks TEMPORAL_API_KEY and TEMPORAL_GRPC_META_* by name).
  markSecretValue('Temporal api_key', apiKey);
  for (const [key, value] of Object.entries(metadata ?? {})) markSecretValue(`Temporal grpc_meta ${key}`, typeof value === 'string' ? value : undefined);
  return {
    connection: {
      address: address || 'localhost:7233',
      // `false`: TLS turned off (TEMPORAL_TLS=false, or tls.disabled in the profile), over an API key
      // too (the SDK turns TLS on for an API key unless told false).
      tls: tls === null || tls === undefined ? undefined : tls === false ? false : tls === true ? {} : asBuffers(tls),
      apiKey: apiKey || undefined,
      ...(metadata && Object.keys(metadata).length > 0 ? { metadata } : {}),
    },
    namespace: loaded.namespace || 'default',
    taskQueue: env.MMIF_TASK_QUEUE || 'mmif',
    ...(profile ? { profile } : {}),
  };
}

/** envconfig reads certificates as Uint8Array; the connections take Buffers. */
function asBuffers(tls: TLSConfig): TLSConfig {
  const buffer = (b: Uint8Array | undefined) => (b ? Buffer.from(b) : undefined);
  return {
    ...tls,
    serverRootCACertificate: buffer(tls.serverRootCACertificate),
    clientCertPair: tls.clientCertPair ? { crt: Buffer.from(tls.clientCertPair.crt), key: Buffer.from(tls.clientCertPair.key) } : undefined,
  };
}
