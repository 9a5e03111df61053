/**
 * No Temporal server where the CLI looks (cli/temporalClient.ts): a refused connection or an unknown
 * host is reported at once, with its cause, instead of after the gRPC client's 10 s connect timeout
 * ("Failed to connect before the deadline"). `mmif status` run from a folder with no record of a
 * --local build adds where to look.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { statusCommand } from '../../cli/commands/status.js';
import { CliError, EXIT } from '../../cli/exitCodes.js';
import { connectTemporal } from '../../cli/temporalClient.js';

/** Well under the 10 s the gRPC client waits for a server that refuses. */
let dir: string;
let port: number;
const saved = { address: process.env.TEMPORAL_ADDRESS, cwd: process.cwd() };

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-unreachable-'));
  // A loopback port nothing listens on: bound by the OS, then closed.
  port = await new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
  process.env.TEMPORAL_ADDRESS = `127.0.0.1:${port}`;
});

after(async () => {
  process.chdir(saved.cwd);
  if (saved.address === undefined) delete process.env.TEMPORAL_ADDRESS;
  else process.env.TEMPORAL_ADDRESS = saved.address;
  await rm(dir, { recursive: true, force: true });
});

/**
 * What `work` failed with. "At once" is asserted by the cause: these lines come from the probe before
 * the gRPC client connects (cli/temporalClient.ts nothingListens), not from its 10 s deadline.
 */
async function failure(work: () => Promise<unknown>): Promise<unknown> {
  return work().then(
    () => assert.fail('no server listens'),
    (e: unknown) => e,
  );
}

test('a refused connection fails at once with its cause, exit 1', async () => {
  const err = await failure(() => connectTemporal());
  assert.ok(err instanceof CliError);
  assert.equal(err.message, `cannot reach Temporal at 127.0.0.1:${port}: Connection refused`);
  assert.equal(err.exitCode, EXIT.failed);
});

test('an unknown host fails at once', async () => {
  process.env.TEMPORAL_ADDRESS = 'mmif-no-such-host.invalid:7233';
  try {
    const err = await failure(() => connectTemporal());
    assert.ok(err instanceof CliError);
    assert.equal(err.message, 'cannot reach Temporal at mmif-no-such-host.invalid:7233: unknown host');
  } finally {
    process.env.TEMPORAL_ADDRESS = `127.0.0.1:${port}`;
  }
});

test('`mmif status` from a folder with nothing to find answers at once: the cause and where a --local build is known', async () => {
  process.chdir(dir);
  const err = await failure(() => statusCommand(['nightly-7']));
  assert.ok(err instanceof CliError);
  assert.equal(
    err.message,
    `cannot reach Temporal at 127.0.0.1:${port}: Connection refused; a \`mmif build --local\` build is known from the folder it ran in ` +
      '(run `mmif status nightly-7` there or in a folder below it) or from its dataset root, in any folder: `mmif status <output>/nightly-7`',
  );
  assert.equal(err.exitCode, EXIT.failed);
});
