import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Stack } from './stack.js';

const run = promisify(execFile);
const CLI = fileURLToPath(new URL('../../cli/mmif.ts', import.meta.url));
/** tsx's loader by its URL, so a worker started in another working directory still finds it. */
const TSX_LOADER = import.meta.resolve('tsx');

export interface MmifResult {
  stdout: string;
  stderr: string;
  code: number;
}

/** Runs the real `mmif` command against the stack's Temporal server; resolves with its output and exit code. */
export async function mmif(stack: Stack, ...args: string[]): Promise<MmifResult> {
  return runMmif(args, { env: { TEMPORAL_ADDRESS: stack.server.address, TEMPORAL_NAMESPACE: 'default', MMIF_TASK_QUEUE: stack.taskQueue } });
}

/** Runs the real `mmif` command with `env` added to this process's environment, in `cwd` (default: this process's). */
export async function runMmif(args: string[], options: { env?: Record<string, string | undefined>; cwd?: string } = {}): Promise<MmifResult> {
  try {
    // Node itself with tsx's loader, not the tsx wrapper: the wrapper is one more Node process per call.
    const { stdout, stderr } = await run(process.execPath, ['--import', TSX_LOADER, CLI, ...args], { env: { ...process.env, ...options.env }, cwd: options.cwd });
    return { stdout, stderr, code: 0 };
  } catch (err) {
    const e = err as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
}

/**
 * `mmif worker` in a process of its own, as production runs it, resolved once it polls. Node itself
 * runs the CLI (not the tsx wrapper), so a signal reaches the worker rather than a wrapper whose
 * grandchild would outlive it and hold the pipes. `place` runs it elsewhere: in a network namespace
 * (`ip netns exec` replaces itself with node, so the signal still reaches the worker) and in its own
 * working directory.
 */
export async function startWorkerProcess(
  env: { temporalAddress: string; taskQueue: string; baseUrl: string; more?: Record<string, string> },
  args: string[] = [],
  place: { netns?: string; cwd?: string } = {},
): Promise<ChildProcess> {
  const node = [process.execPath, '--import', TSX_LOADER, CLI, 'worker', ...args];
  const [command, ...commandArgs] = place.netns ? ['ip', 'netns', 'exec', place.netns, ...node] : node;
  const child = spawn(command!, commandArgs, {
    env: { ...process.env, TEMPORAL_ADDRESS: env.temporalAddress, MMIF_TASK_QUEUE: env.taskQueue, OPENAI_BASE_URL: env.baseUrl, ...env.more },
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd: place.cwd,
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('worker polling') && resolve());
    child.once('exit', (code) => reject(new Error(`worker exited early (${code}): ${stderr.trim()}`)));
  });
  return child;
}
