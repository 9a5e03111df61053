/**
 * A throwaway S3-compatible server for tests: versitygw (built by `tools/install.sh test`) serving a
 * fresh temp directory on 127.0.0.1, with one bucket created. Lets the S3 code paths run offline.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import type { S3Options } from '../../storage/s3Store.js';
import { freePort } from '../../local/temporalDevServer.js';

export interface S3Server {
  endpoint: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  /** The folder versitygw serves (posix backend): the bucket's objects are files under `<dataDir>/<bucket>/`. */
  dataDir: string;
  /** Kills the server process but keeps its data: an outage. */
  kill(): Promise<void>;
  /** Starts it again on the same port and data after `kill`. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BINARY = path.join(REPO_ROOT, 'tools/bin/versitygw');
const STARTUP_TIMEOUT_MS = 10_000;

/** `host`: the address it binds (127.0.0.1). */
export async function startS3Server(options: { host?: string } = {}): Promise<S3Server> {
  if (!existsSync(BINARY)) {
    throw new Error(`versitygw not found at ${BINARY}: run \`bash tools/install.sh test\` to build it`);
  }
  const dataDir = await mkdtemp(path.join(tmpdir(), 'mmif-s3-'));
  const host = options.host ?? '127.0.0.1';
  const port = await freePort(host);
  const credentials = { accessKeyId: 'mmif-test', secretAccessKey: 'mmif-test-secret', region: 'us-east-1' };
  const endpoint = `http://${host}:${port}`;
  let server = await launch(host, port, dataDir, credentials, endpoint);

  const kill = async () => {
    await server.kill();
  };
  const stop = async () => {
    await server.kill();
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    const bucket = 'mmif-test';
    const client = new S3Client({ endpoint, forcePathStyle: true, region: credentials.region, credentials });
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
    client.destroy();
    const restart = async () => {
      server = await launch(host, port, dataDir, credentials, endpoint);
    };
    return { endpoint, bucket, ...credentials, dataDir, kill, restart, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** One versitygw process serving `dataDir`; resolves once it answers HTTP. */
async function launch(host: string, port: number, dataDir: string, credentials: { accessKeyId: string; secretAccessKey: string }, endpoint: string) {
  // Connections kept alive as S3 keeps them (ADR 0081); no request log nobody reads.
  const child = spawn(BINARY, ['--port', `${host}:${port}`, '--keep-alive', '--quiet', 'posix', dataDir], {
    env: { ...process.env, ROOT_ACCESS_KEY: credentials.accessKeyId, ROOT_SECRET_KEY: credentials.secretAccessKey },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // If the test process dies without calling stop(), do not leave the server running.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const kill = async () => {
    process.off('exit', killOnExit);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  try {
    await waitUntilAnswering(endpoint, child, () => stderr);
  } catch (err) {
    await kill();
    throw err;
  }
  return { kill };
}

/** Points the AWS SDK's default credential chain at the test server; returns the matching store options. */
export function useS3Env(s: S3Server): S3Options {
  process.env.AWS_ACCESS_KEY_ID = s.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = s.secretAccessKey;
  process.env.AWS_REGION = s.region;
  return { endpoint: s.endpoint, region: s.region, forcePathStyle: true };
}

/** Any HTTP answer (even 403 for an unsigned request) means the gateway is serving. */
async function waitUntilAnswering(endpoint: string, child: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`versitygw exited with code ${child.exitCode}: ${stderr()}`);
    try {
      await fetch(endpoint, { signal: AbortSignal.timeout(500) });
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`versitygw did not answer on ${endpoint} within ${STARTUP_TIMEOUT_MS} ms: ${stderr()}`);
}
