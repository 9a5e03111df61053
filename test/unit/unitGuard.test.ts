/**
 * The unit tier's rule holds (test/harness/unitGuard.ts, preloaded by `npm run test:unit`): in a unit
 * test, starting a child process, listening on a socket or loading Temporal's test server package
 * throws an error naming the rule. Run without the preload, this file fails: the tier is not guarded.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync, fork, spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { createServer } from 'node:http';
import { promisify } from 'node:util';
// Not imported from the guard: importing it would install it, and this file must fail without the preload.
const RULE = /test\/unit starts no server and no process: .*Move this test to test\/integration\//;

test('a child process cannot start: spawn, execFile (also promisified), execFileSync and fork throw the rule', async () => {
  assert.throws(() => spawn('node', ['--version']), RULE);
  assert.throws(() => execFileSync('node', ['--version']), RULE);
  assert.throws(() => fork('./nothing.js'), RULE);
  assert.throws(() => execFile('node', ['--version'], () => {}), /child_process\.execFile\("node"\)/);
  await assert.rejects(async () => promisify(execFile)('node', ['--version']), RULE);
});

test('no server listens: an HTTP server and a UDP socket throw the rule before binding', () => {
  // Unreferenced, so that without the guard this file fails instead of waiting on them forever.
  const server = createServer().unref();
  assert.throws(() => server.listen(0, '127.0.0.1'), RULE);
  assert.equal(server.listening, false);
  assert.throws(() => createSocket('udp4').unref().bind(0), RULE);
});

test("Temporal's test server package does not load", async () => {
  await assert.rejects(import('@temporalio/testing'), /starts no server and no process: @temporalio\/testing starts a Temporal server/);
});
