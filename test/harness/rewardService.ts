/**
 * `mmif reward serve` in a process of its own, as a user runs it (node runs the CLI, so a signal
 * reaches it), on a free port: resolved once it prints the address it serves; `post` sends JSON and
 * resolves with the status and the parsed body.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../cli/mmif.ts', import.meta.url));

export interface RewardService {
  url: string;
  /** What it printed on stdout (the `serving` line). */
  banner: string;
  post<T = Record<string, unknown>>(route: string, body: unknown): Promise<{ status: number; body: T }>;
  stop(): Promise<void>;
}

export async function startRewardService(args: string[], env: Record<string, string> = {}): Promise<RewardService> {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'reward', 'serve', '--port', '0', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const banner = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (/serving http:\/\/\S+/.test(stdout)) resolve(stdout);
    });
    child.once('exit', (code) => reject(new Error(`mmif reward serve exited ${code}: ${stderr}`)));
  });
  const url = /serving (http:\/\/\S+?)\/? /.exec(banner)![1]!;
  return {
    url,
    banner,
    async post(route, body) {
      const res = await fetch(`${url}${route}`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
      return { status: res.status, body: (await res.json()) as never };
    },
    async stop() {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}
