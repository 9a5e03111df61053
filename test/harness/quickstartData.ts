/**
 * What the trainer-format e2e tests share: `mmif` run on the bundled simulator (no OPENAI_BASE_URL,
 * as `npm start` runs), throwing on a non-zero exit, and a build's records read back from its
 * sharegpt shards in shard order.
 */
import { execFile } from 'node:child_process';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../../', import.meta.url));

/** `mmif ARGS` with the simulator as the endpoint; resolves with stdout, rejects with the failed run (code, stderr). */
export async function simulatedMmif(...args: string[]): Promise<string> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.OPENAI_BASE_URL; // the quickstart then runs on the bundled simulator
  const { stdout } = await run(path.join(REPO, 'node_modules/.bin/tsx'), [path.join(REPO, 'cli/mmif.ts'), ...args], { env, cwd: REPO, maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

/** The records of every shard file under `root/sub`, in file order. */
export async function readRecords<R>(root: string, sub: string, parse: (line: string) => R): Promise<R[]> {
  const folder = path.join(root, sub);
  const records: R[] = [];
  for (const file of (await readdir(folder)).sort()) records.push(...(await readFile(path.join(folder, file), 'utf8')).split('\n').filter(Boolean).map(parse));
  return records;
}
