/**
 * llama.cpp's own OpenAI-compatible server (`llama-server`, built by `tools/install.sh test` into
 * tools/llama.cpp) serving the tiny random VLM of test/fixtures/llamacpp, on 127.0.0.1 and a free port.
 * The flags are the ones docs/endpoints.md gives for a real GGUF VLM (-m, --mmproj, --host, --port).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { TOOLS_DIR } from '../../local/tools.js';
import { eventually } from './datasetChecks.js';

export const LLAMA_SERVER = `${TOOLS_DIR}llama.cpp/bin/llama-server`;
const FIXTURES = fileURLToPath(new URL('../fixtures/llamacpp/', import.meta.url));
export const TINY_VLM = `${FIXTURES}tiny-vlm.gguf`;
export const TINY_VLM_MMPROJ = `${FIXTURES}tiny-vlm-mmproj.gguf`;

export interface LlamaServer {
  /** The OpenAI-compatible base URL, `http://127.0.0.1:<port>/v1`. */
  baseUrl: string;
  /** Everything the server printed so far (it logs to stderr). */
  log(): string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Starts the server and resolves once its /health answers 200 (the model is loaded). */
export async function startLlamaServer(options: { mmproj: boolean }): Promise<LlamaServer> {
  if (!existsSync(LLAMA_SERVER)) throw new Error(`${LLAMA_SERVER} is missing: run 'bash tools/install.sh test'`);
  const port = await freePort();
  const args = ['-m', TINY_VLM, ...(options.mmproj ? ['--mmproj', TINY_VLM_MMPROJ] : []), '--alias', 'tiny-vlm', '--host', '127.0.0.1', '--port', String(port)];
  // A small context and two slots, one thread each: the model is tiny and the machine is shared.
  args.push('--ctx-size', '32768', '--parallel', '2', '--threads', '1', '--no-warmup');
  const child: ChildProcess = spawn(LLAMA_SERVER, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once('exit', () => ((exited = true), resolve())));
  const url = `http://127.0.0.1:${port}`;
  const healthy = async () => {
    if (exited) throw new Error(`llama-server exited before it was ready:\n${output}`);
    return fetch(`${url}/health`).then(
      (r) => r.ok,
      () => false,
    );
  };
  await eventually(healthy, 60_000, `llama-server on ${url}/health`);
  return {
    baseUrl: `${url}/v1`,
    log: () => output,
    stop: async () => {
      if (!exited) child.kill('SIGTERM');
      await exit;
    },
  };
}
