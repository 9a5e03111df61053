/**
 * `mmif doctor` and `mmif worker` against real servers, settings from a temporal.toml profile as
 * Temporal's CLI reads them: every check's line when all is well, and each failure class in one line
 * naming the profile and the cause: an unknown namespace (the dev server), a refused API key (a
 * server answering as Temporal Cloud does), a missing profile, a Temporal that does not listen, an
 * endpoint that refuses the connection, an output that cannot be written, a metrics address in use.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, startTemporalDevServer, type DevServer } from '../../local/temporalDevServer.js';
import { startSimulator, type SimulatorHandle } from '../../simulator/server.js';
import { closedPort } from '../harness/closedPort.js';
import { runMmif } from '../harness/mmifCli.js';
import { startRefusingTemporal } from '../harness/refusingTemporal.js';

let dir: string;
let server: DevServer;
let simulator: SimulatorHandle;
let refusing: { address: string; stop(): Promise<void> };
let toml: string;

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-doctor-'));
  [server, simulator, refusing] = await Promise.all([startTemporalDevServer(), startSimulator(), startRefusingTemporal()]);
  toml = path.join(dir, 'temporal.toml');
  await writeFile(
    toml,
    [
      '[profile.good]',
      `address = "${server.address}"`,
      'namespace = "default"',
      '[profile.bad-ns]',
      `address = "${server.address}"`,
      'namespace = "nope"',
      '[profile.bad-key]',
      `address = "${refusing.address}"`,
      'api_key = "wrong-key"',
      // Plain HTTP/2 for the test's refusing server (Temporal Cloud speaks TLS; the refusal is the same).
      '[profile.bad-key.tls]',
      'disabled = true',
      '',
    ].join('\n'),
  );
});

after(async () => {
  await Promise.all([server?.stop(), simulator?.close(), refusing?.stop()]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The CLI with settings from the profile only: none of this process's TEMPORAL_* variables. */
function withProfile(profile: string, args: string[], extra: Record<string, string> = {}) {
  const clean = Object.fromEntries(
    Object.keys(process.env)
      .filter((k) => k.startsWith('TEMPORAL_') || k.startsWith('MMIF_'))
      .map((k) => [k, undefined]),
  );
  return runMmif(args, { env: { ...clean, TEMPORAL_CONFIG_FILE: toml, TEMPORAL_PROFILE: profile, OPENAI_BASE_URL: simulator.url, ...extra } });
}

async function configFile(name: string, settings: Record<string, unknown>): Promise<string> {
  const file = path.join(dir, `${name}.json`);
  const config = {
    buildId: name,
    output: path.join(dir, 'out'),
    sources: [{ type: 'cc3m', uri: dir }],
    maxSamples: 1,
    models: { default: { model: 'mmif-sim-vlm' } },
    ...settings,
  };
  await writeFile(file, JSON.stringify(config));
  return file;
}

const linesOf = (stdout: string) => stdout.trim().split('\n');

test('a healthy setup: one ok line per check, the profile named, pollers noted', async () => {
  const metricsPort = await freePort();
  const result = await withProfile('good', ['doctor', '--config', await configFile('healthy', {})], { MMIF_TASK_QUEUE: 'doctor-q', MMIF_METRICS_ADDR: String(metricsPort) });
  assert.equal(result.code, 0, result.stdout + result.stderr);
  const lines = linesOf(result.stdout);
  assert.deepEqual(lines.slice(0, 2), [
    `ok   temporal: ${server.address}, namespace default (profile 'good' of ${toml})`,
    "note task queue 'doctor-q': no worker polls it (yet): builds wait until one does",
  ]);
  assert.ok(
    lines.some((l) => l.startsWith(`ok   endpoint ${simulator.url} (model mmif-sim-vlm;`)),
    result.stdout,
  );
  assert.ok(lines.includes(`ok   output ${path.join(dir, 'out')}: writable`), result.stdout);
  assert.ok(lines.includes(`ok   metrics: 127.0.0.1:${metricsPort} is free to serve /metrics`), result.stdout);
  assert.match(lines.at(-1)!, /^(ok|note) +tools: /);
});

test('a namespace the server does not know fails doctor and worker in one line naming the profile', async () => {
  const expected = `cannot reach Temporal at ${server.address} (profile 'bad-ns' of ${toml}): namespace 'nope' not found (namespace, TEMPORAL_NAMESPACE)`;
  const doctor = await withProfile('bad-ns', ['doctor']);
  assert.equal(doctor.code, 1);
  assert.equal(linesOf(doctor.stdout)[0], `FAIL temporal: ${expected}`);
  const worker = await withProfile('bad-ns', ['worker']);
  assert.equal(worker.code, 1);
  assert.equal(worker.stderr.trim(), `mmif: ${expected}`);
});

test('a refused API key fails doctor and worker in one line naming the profile', async () => {
  const expected = `cannot reach Temporal at ${refusing.address} (profile 'bad-key' of ${toml}): credentials refused (Request unauthorized.): check the API key (api_key, TEMPORAL_API_KEY) or client certificate`;
  const doctor = await withProfile('bad-key', ['doctor']);
  assert.equal(doctor.code, 1);
  assert.equal(linesOf(doctor.stdout)[0], `FAIL temporal: ${expected}`);
  assert.doesNotMatch(doctor.stdout + doctor.stderr, /wrong-key/, 'the key is never printed');
  const worker = await withProfile('bad-key', ['worker']);
  assert.equal(worker.code, 1);
  assert.equal(worker.stderr.trim(), `mmif: ${expected}`);
});

test('a profile that is not in the file, and a Temporal that does not listen, each in one line', async () => {
  const missing = await withProfile('prod', ['doctor']);
  assert.equal(missing.code, 1);
  assert.equal(linesOf(missing.stdout)[0], `FAIL temporal: Temporal profile 'prod' of ${toml}: Profile 'prod' not found in config data`);
  const worker = await withProfile('prod', ['worker']);
  assert.equal(worker.stderr.trim(), `mmif: Temporal profile 'prod' of ${toml}: Profile 'prod' not found in config data`);
  const port = await closedPort();
  const down = await withProfile('good', ['doctor'], { TEMPORAL_ADDRESS: `127.0.0.1:${port}` });
  assert.equal(linesOf(down.stdout)[0], `FAIL temporal: cannot reach Temporal at 127.0.0.1:${port} (profile 'good' of ${toml}): Connection refused`);
});

test('an endpoint that refuses, an output that cannot be written and a metrics address in use: each its own FAIL line, the rest still checked', async () => {
  const blocker = path.join(dir, 'a-file');
  await writeFile(blocker, 'not a folder');
  const endpoint = `http://127.0.0.1:${await closedPort()}/v1`;
  const config = await configFile('broken', { output: path.join(blocker, 'out'), models: { default: { model: 'mmif-sim-vlm', baseUrl: endpoint } } });
  const taken: Server = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const port = (taken.address() as { port: number }).port;
  try {
    const result = await withProfile('good', ['doctor', '--config', config], { MMIF_METRICS_ADDR: `127.0.0.1:${port}` });
    assert.equal(result.code, 1);
    const lines = linesOf(result.stdout);
    assert.ok(lines[0]!.startsWith('ok   temporal:'), result.stdout);
    assert.ok(
      lines.some((l) => l.startsWith('FAIL endpoints: ') && l.includes(endpoint) && /refused/i.test(l)),
      result.stdout,
    );
    assert.ok(
      lines.some((l) => l.startsWith('FAIL output: ') && l.includes(blocker)),
      result.stdout,
    );
    assert.ok(lines.includes(`FAIL metrics: cannot bind 127.0.0.1:${port} (MMIF_METRICS_ADDR): EADDRINUSE`), result.stdout);
  } finally {
    taken.close();
  }
});
