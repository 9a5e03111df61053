/**
 * Infrastructure failures through a whole build, as the user reads them (issue 34): the object store
 * (versitygw) going away mid-build for longer than the retries, under `build --wait`, and a disk that
 * fills mid-build (a small tmpfs mounted for the output), under `build --local`. Each ends in one
 * line naming the component (the object store at its endpoint, the disk at its path with its free
 * space), the key or path it was writing, and the shards it hit; never a bare ECONNREFUSED or ENOSPC.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { SAMPLES_DIR } from '../../cli/quickstartConfig.js';
import { captureLogs } from '../harness/canaryScan.js';
import { seen } from '../harness/outputSeen.js';
import { startS3Server, useS3Env, type S3Server } from '../harness/s3Server.js';
import { startStack, type Stack } from '../harness/stack.js';

const CLI = fileURLToPath(new URL('../../cli/mmif.ts', import.meta.url));
const run = promisify(execFile);

let dir: string | undefined;
let stack: Stack | undefined;
let s3: S3Server | undefined;
let mounted: string | undefined;
const children: ChildProcess[] = [];

after(async () => {
  for (const child of children) child.kill('SIGKILL');
  if (mounted) await run('umount', ['-l', mounted]).catch(() => undefined);
  await s3?.stop();
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** A build that fails fast once the store is gone: two attempts a second apart, slow replies so shards are mid-way when it goes. */
const buildConfig = (buildId: string, output: string) => ({
  buildId,
  seed: 5,
  output,
  sources: [{ type: 'cc3m', uri: SAMPLES_DIR, layout: 'files' }],
  maxSamples: 8,
  shardSize: 4,
  sliceSize: 2,
  retry: { maximumAttempts: 2, initialIntervalSeconds: 1, maximumIntervalSeconds: 1 },
  models: { default: { model: 'mmif-sim-vlm' } },
});

/** Runs `mmif` with `args`; resolves once its output matches `ready`, returning what it prints and its exit. */
async function startMmif(args: string[], env: Record<string, string>, ready: RegExp) {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await seen(child, () => out, ready);
  return { exit, output: () => out };
}

/** The `mmif: ...` failure line, which must be the one line the failure takes. */
function failureLine(out: string): string {
  const lines = out.split('\n').filter((l) => l.startsWith('mmif: '));
  assert.equal(lines.length, 1, out.slice(-3000));
  return lines[0]!;
}

test('build --wait: the object store goes away mid-build for longer than the retries; one line names it, the key and the shards', async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-store-fail-'));
  stack = await startStack({ simulator: { seed: 5, faults: { latencyMs: 300 } }, taskQueue: 'mmif-store-failures' });
  s3 = await startS3Server();
  const s3Options = useS3Env(s3);
  const file = path.join(dir, 's3.json');
  await writeFile(file, JSON.stringify({ ...buildConfig('s3-outage', `s3://${s3.bucket}/out`), s3: s3Options }));
  const env = { TEMPORAL_ADDRESS: stack.server.address, TEMPORAL_NAMESPACE: 'default', MMIF_TASK_QUEUE: stack.taskQueue, OPENAI_BASE_URL: stack.simulator.url };
  const cli = await startMmif(['build', '--config', file, '--wait'], env, /\d+\/2 shards, [12] running/);
  // The worker runs in this process: its log of each failed activity passes through stdout and stderr.
  const workerLog = captureLogs();
  await s3.kill();
  const code = await cli.exit.finally(() => workerLog.stop());
  const line = failureLine(cli.output());
  assert.equal(code, 1, cli.output().slice(-3000));
  assert.match(line, new RegExp(`object store ${s3.endpoint.replace(/[.]/g, '\\.')}`), line);
  assert.match(line, /(writing|reading|listing) 's3-outage\/[^']+'/, line);
  assert.match(line, /[12] of 2 shards had failed before: shard [01]: object store /, line);
  assert.doesNotMatch(line, /^mmif: build s3-outage failed: connect ECONNREFUSED/);
  // The worker's log names the store and the key in each failure it shows, never a bare ECONNREFUSED.
  const refused = workerLog
    .text()
    .split('\n')
    .filter((l) => l.includes('ECONNREFUSED'));
  assert.ok(refused.length > 0, 'the worker logged the failed activities');
  const named = new RegExp(`object store ${s3.endpoint.replace(/[.]/g, '\\.')} \\(s3://[^)]+\\): (writing|reading|listing) '`);
  const unnamed = refused.filter((l) => !named.test(l));
  assert.deepEqual(unnamed, [], 'worker log lines without the store and key');
});

/** Writes zeros to `file` until the device is full. */
async function fillDisk(file: string): Promise<void> {
  const handle = await open(file, 'w');
  const chunk = Buffer.alloc(64 * 1024);
  try {
    for (;;) await handle.write(chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    await handle.close().catch(() => undefined);
  }
}

test('build --local: the output disk fills mid-build; one line names the disk path, its free space, the key and the shards', async (t) => {
  dir ??= await mkdtemp(path.join(tmpdir(), 'mmif-store-fail-'));
  const disk = path.join(dir, 'small-disk');
  await mkdir(disk);
  try {
    await run('mount', ['-t', 'tmpfs', '-o', 'size=64m', 'tmpfs', disk]);
  } catch (err) {
    t.skip(`mounting a tmpfs was refused: ${(err as Error).message.split('\n')[0]}`);
    return;
  }
  mounted = disk;
  const file = path.join(dir, 'disk.json');
  await writeFile(file, JSON.stringify(buildConfig('disk-full', path.join(disk, 'out'))));
  // The stack's simulator (slow replies) serves the models: the run's Temporal and worker are --local's own.
  stack ??= await startStack({ simulator: { seed: 5, faults: { latencyMs: 300 } }, taskQueue: 'mmif-store-failures' });
  const env = { OPENAI_BASE_URL: stack.simulator.url };
  const cli = await startMmif(['build', '--config', file, '--local'], env, /\d+\/2 shards, [12] running/);
  await fillDisk(path.join(disk, 'filler'));
  const code = await cli.exit;
  const line = failureLine(cli.output());
  assert.equal(code, 1, cli.output().slice(-3000));
  assert.match(line, new RegExp(`disk ${disk.replace(/[.]/g, '\\.')}/out: no space left on the device writing '[^']+' \\(\\d+ MB free of 64 MB\\)`), line);
  assert.match(line, /[12] of 2 shards had failed before: shard [01]: disk /, line);
  assert.doesNotMatch(line, /^mmif: build disk-full failed: ENOSPC/);
});
