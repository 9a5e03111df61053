/** Starts the real `temporal server start-dev` on a free loopback port, for the quickstart and tests. */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { temporalCliPath } from './tools.js';
import { DEV_SERVER_SEARCH_ATTRIBUTES } from '../workflows/searchAttributes.js';

export interface DevServer {
  address: string;
  uiPort?: number;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** A port free on `host` (default loopback) now; another process may take it before it is bound. */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Attempts at a fresh port: another process can take a free port between our probe and the server's bind. */
const START_ATTEMPTS = 3;

type DevServerOptions = { dbFile?: string; withUi?: boolean; port?: number; ip?: string };

/** `port`: that port, tried once (a server restarted where its clients look); else a free one. `ip`: the address it binds (127.0.0.1). */
export async function startTemporalDevServer(options: DevServerOptions = {}): Promise<DevServer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnFreePort(options);
    } catch (err) {
      if (options.port !== undefined || attempt >= START_ATTEMPTS || !/address already in use/.test((err as Error).message)) throw err;
    }
  }
}

async function startOnFreePort(options: DevServerOptions): Promise<DevServer> {
  const ip = options.ip ?? '127.0.0.1';
  const port = options.port ?? (await freePort(ip));
  const uiPort = options.withUi ? await freePort() : undefined;
  const args = ['server', 'start-dev', '--ip', ip, '--port', String(port), '--log-level', 'error', '--namespace', 'default'];
  args.push(...(uiPort ? ['--ui-port', String(uiPort)] : ['--headless']));
  if (options.dbFile) args.push('--db-filename', options.dbFile);
  for (const attribute of DEV_SERVER_SEARCH_ATTRIBUTES) args.push('--search-attribute', attribute);
  const child = spawn(temporalCliPath(), args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`temporal dev server exited (code ${code}): ${stderr.trim() || 'no output'}`))));
  child.once('error', () => {});
  await Promise.race([waitForPort(ip, port, 30_000), exited]);
  exited.catch(() => {});
  return {
    address: `${ip}:${port}`,
    uiPort,
    process: child,
    stop: () => stopProcess(child),
  };
}

async function waitForPort(ip: string, port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, ip, () => {
        socket.end();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`temporal dev server did not open port ${port} within ${timeoutMs} ms`);
}

export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await gone;
  clearTimeout(timer);
}
