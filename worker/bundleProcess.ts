/**
 * The workflow bundle, built once and reused: webpack's bundling costs a worker several seconds of
 * start-up and raises a process's peak memory by ~200 MB (145 -> 340 MB measured), which a worker would
 * otherwise carry as its high-water mark for its whole life. So the bundle is built in a short-lived
 * child process and kept at .tmp/workflow-bundles/<hash>.js, keyed by a hash of the sources it could
 * include; a worker whose sources match an existing file starts from it with `{ codePath }`. The unit
 * tier, which starts no process, builds a missing bundle in its own process and leaves it there for the rest.
 * Run as a script, this module is the child: `node --import tsx worker/bundleProcess.ts <out.js>`
 * writes the bundle's code to <out.js>.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';

const SELF = fileURLToPath(import.meta.url);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const WORKFLOWS_PATH = path.join(ROOT, 'workflows/index.ts');
/** The workflow interceptors every bundle carries: a traced build's spans (workflows/tracing.ts, telemetry/tracing.ts). */
const TRACING_INTERCEPTORS = path.join(ROOT, 'workflows/tracing.ts');
const BUNDLE_DIR = path.join(ROOT, '.tmp/workflow-bundles');
/** Folders whose code never reaches the workflow bundle; everything else counts towards its key. */
const NOT_BUNDLED = new Set(['node_modules', 'test', 'bench', 'tools', 'samples', 'out', 'bin', 'simulator', 'cli']);

/** The workflow bundle, built in this process. */
export function bundleWorkflows(): Promise<WorkflowBundleWithSourceMap> {
  // webpack names modules relative to its context, process.cwd() by default: the repo root instead, so
  // the cached bundle is the same whichever process built it (a worker may run in any folder).
  return bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    workflowInterceptorModules: [TRACING_INTERCEPTORS],
    logger: quietBundlerLogger,
    webpackConfigHook: (config) => ({ ...config, context: ROOT }),
  });
}

const quietBundlerLogger = {
  log: () => {},
  trace: () => {},
  debug: () => {},
  info: () => {},
  warn: (message: string) => console.warn(message),
  error: (message: string) => console.error(message),
};

/**
 * The path of a bundle of the current workflow code, built (in a child process) only when no bundle of
 * these exact sources exists. The key hashes every TypeScript file the bundle could import plus the
 * versions of the Temporal workflow SDK and its tracing interceptors, so an edited workflow, a moved helper or an SDK upgrade each give a
 * new bundle; hashing contents rather than comparing mtimes survives `git checkout` and copies.
 */
export async function prebuiltWorkflowBundle(buildIn: 'child' | 'this process' = 'child'): Promise<string> {
  const codePath = path.join(BUNDLE_DIR, `${await workflowSourcesHash()}.js`);
  if (await exists(codePath)) return codePath;
  await mkdir(BUNDLE_DIR, { recursive: true });
  // Written under a name of its own then renamed: two workers starting at once never read half a file.
  const partial = `${codePath}.${process.pid}.partial`;
  if (buildIn === 'this process') await writeFile(partial, (await bundleWorkflows()).code);
  else {
    const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), SELF, partial], { stdio: ['ignore', 'inherit', 'inherit'] });
    const code = await new Promise<number | null>((done, fail) => child.on('error', fail).on('close', done));
    if (code !== 0) throw new Error(`bundling the workflows failed (child exited with ${code})`);
  }
  await rename(partial, codePath);
  return codePath;
}

async function workflowSourcesHash(): Promise<string> {
  const hash = createHash('sha256');
  for (const pkg of ['@temporalio/workflow', '@temporalio/interceptors-opentelemetry']) {
    const { version } = JSON.parse(await readFile(path.join(ROOT, `node_modules/${pkg}/package.json`), 'utf8')) as { version: string };
    hash.update(`${pkg}@${version}\n`);
  }
  for (const file of await sourceFiles(ROOT, true)) hash.update(`${path.relative(ROOT, file)}\n`).update(await readFile(file));
  return hash.digest('hex').slice(0, 16);
}

async function sourceFiles(dir: string, top: boolean): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const files: string[] = [];
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.name.startsWith('.')) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory() && !(top && NOT_BUNDLED.has(entry.name))) files.push(...(await sourceFiles(full, false)));
    else if (entry.isFile() && !top && entry.name.endsWith('.ts')) files.push(full);
  }
  return files;
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

if (process.argv[1] === SELF) await writeFile(process.argv[2]!, (await bundleWorkflows()).code);
