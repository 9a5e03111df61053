/**
 * A client that loses Temporal keeps following (cli/temporalOutage.ts): `mmif status --watch` on an
 * open build, the server killed and started again on the same port and database, says once that it
 * lost the server and once that it is back, and exits only with the run's real outcome (here the
 * run terminated after the restart), never with the SDK's bare "Failed to describe workflow" (issue 34:
 * it exited 1 about 20 s into the outage while the build went on). `build --wait` and `resume --wait`
 * follow with the same watch.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { seen } from '../harness/outputSeen.js';
import { Client, Connection } from '@temporalio/client';
import { freePort, startTemporalDevServer, type DevServer } from '../../local/temporalDevServer.js';
import { noAnswerFrom, TemporalFollower } from '../../cli/temporalOutage.js';

const CLI = fileURLToPath(new URL('../../cli/mmif.ts', import.meta.url));
const BUILD_ID = 'outage';

let dir: string;
let server: DevServer | undefined;
let watcher: ChildProcess | undefined;

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-outage-'));
});

after(async () => {
  watcher?.kill('SIGKILL');
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
});

test('status --watch follows a build through a Temporal restart and ends with the run outcome', async () => {
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  const dbFile = path.join(dir, 'temporal.db');
  server = await startTemporalDevServer({ port, dbFile });
  // An open build no worker polls: it stays running until the test ends it.
  const connection = await Connection.connect({ address });
  const client = new Client({ connection });
  await client.workflow.start('buildDataset', { taskQueue: 'mmif-outage-nobody', workflowId: BUILD_ID, args: [{}] });
  await connection.close();

  watcher = spawn(process.execPath, ['--import', 'tsx', CLI, 'status', BUILD_ID, '--watch'], {
    env: { ...process.env, TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: 'default' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  watcher.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  watcher.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exit = new Promise<number | null>((resolve) => watcher!.once('exit', (code) => resolve(code)));
  // Following: the run has no worker, which it says.
  await seen(watcher, () => out, /no worker polls task queue mmif-outage-nobody/);

  await server.process.kill('SIGKILL');
  await seen(watcher, () => out, new RegExp(`lost Temporal at ${address} \\((UNAVAILABLE|DEADLINE_EXCEEDED): [^)]*\\); reconnecting`));
  server = await startTemporalDevServer({ port, dbFile });
  await seen(watcher, () => out, new RegExp(`reconnected to Temporal at ${address} after \\d+ s; following the build again`));
  assert.equal(watcher.exitCode, null, 'still following after the outage');

  const again = await Connection.connect({ address });
  await new Client({ connection: again }).workflow.getHandle(BUILD_ID).terminate('ended by the outage test');
  await again.close();
  assert.equal(await exit, 1);
  assert.equal(out.trim().split('\n').at(-1), `mmif: build ${BUILD_ID} was terminated: ended by the outage test`);
  assert.doesNotMatch(out, /Failed to describe workflow/);
  assert.equal((out.match(/lost Temporal/g) ?? []).length, 1, 'the loss is said once');
});

test('the follower repeats only calls the server did not answer', async () => {
  const lines: string[] = [];
  const follower = new TemporalFollower('127.0.0.1:1', { say: (l) => lines.push(l), firstDelayMs: 1, maxDelayMs: 4 });
  const unavailable = Object.assign(new Error('14 UNAVAILABLE: No connection established'), { code: 14, details: 'No connection established', metadata: {} });
  let calls = 0;
  const value = await follower.call(async () => {
    calls += 1;
    if (calls < 4) throw new Error('Failed to describe workflow', { cause: unavailable });
    return 'described';
  });
  assert.equal(value, 'described');
  assert.equal(calls, 4);
  assert.equal(lines.length, 2);
  assert.match(lines[0]!, /^lost Temporal at 127\.0\.0\.1:1 \(UNAVAILABLE: No connection established\); reconnecting/);
  assert.match(lines[1]!, /^reconnected to Temporal at 127\.0\.0\.1:1 after \d+ s/);
  const notFound = Object.assign(new Error('5 NOT_FOUND'), { code: 5, details: 'workflow not found', metadata: {} });
  assert.equal(noAnswerFrom(notFound), undefined);
  await assert.rejects(
    follower.call(async () => {
      throw notFound;
    }),
    /NOT_FOUND/,
  );
});
