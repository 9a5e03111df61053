/**
 * Bundles the workflow code in a short-lived child process and hands back the bundle: webpack's
 * bundling raises a process's peak memory by ~200 MB (145 -> 340 MB measured), which a worker would
 * otherwise carry as its high-water mark for its whole life. Run as a script, it is the child:
 * `node --import tsx worker/bundleProcess.ts <out.js>` writes the bundle's code to <out.js>.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';

const SELF = fileURLToPath(import.meta.url);
const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

/** The workflow bundle, built in this process. */
export function bundleWorkflows(): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quietBundlerLogger });
}

const quietBundlerLogger = {
  log: () => {},
  trace: () => {},
  debug: () => {},
  info: () => {},
  warn: (message: string) => console.warn(message),
  error: (message: string) => console.error(message),
};

/** The workflow bundle, built in a child process. */
export async function bundleWorkflowsInChild(): Promise<{ code: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'mmif-bundle-'));
  try {
    const out = path.join(dir, 'workflows.js');
    const child = spawn(process.execPath, ['--import', 'tsx', SELF, out], { stdio: ['ignore', 'inherit', 'inherit'] });
    const code = await new Promise<number | null>((done, fail) => child.on('error', fail).on('close', done));
    if (code !== 0) throw new Error(`bundling the workflows failed (child exited with ${code})`);
    return { code: await readFile(out, 'utf8') };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === SELF) await writeFile(process.argv[2]!, (await bundleWorkflows()).code);
