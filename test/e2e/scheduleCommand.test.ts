/**
 * `mmif schedule` against a real Temporal dev server, where the user meets its answers: a cron the
 * server refuses is a usage error (exit 2) with the server's reason and the expression given, and
 * `describe` reads as lines (the spec back in cron's fields, the policies, the runs) unless `--json`.
 * No worker is needed: the schedule is created paused and never runs. The runs themselves are in
 * operations.test.ts.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTemporalDevServer, type DevServer } from '../../local/temporalDevServer.js';
import { EXIT } from '../../cli/exitCodes.js';
import { runMmif } from '../harness/mmifCli.js';

let server: DevServer;
let dir: string;
let file: string;
const schedule = (...args: string[]) => runMmif(['schedule', ...args], { env: { TEMPORAL_ADDRESS: server.address, TEMPORAL_NAMESPACE: 'default' } });

before(async () => {
  [server, dir] = await Promise.all([startTemporalDevServer(), mkdtemp(path.join(tmpdir(), 'mmif-schedule-'))]);
  file = path.join(dir, 'build.json');
  await writeFile(
    file,
    JSON.stringify({ buildId: 'nightly', output: 'out', sources: [{ type: 'chartqa', uri: 'charts' }], maxSamples: 4, models: { default: { model: 'gpt-4o' } } }),
  );
});

after(async () => {
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('an invalid cron exits 2 with the server reason and the expression; nothing is created', async () => {
  const refused = await schedule('create', 'bad-cron', '--config', file, '--cron', '61 2 * * *');
  assert.equal(refused.code, EXIT.usage, refused.stderr);
  assert.equal(refused.stderr.trim(), "mmif: invalid schedule spec: Minute is not in range [0-59] (--cron '61 2 * * *')");
  assert.equal((await schedule('describe', 'bad-cron')).code, EXIT.notFound);
});

test('describe prints the schedule readably, --json as JSON', async () => {
  const created = await schedule('create', 'nightly', '--config', file, '--cron', '30 2 * * 1-5', '--catchup-window', '2h', '--paused');
  assert.equal(created.code, 0, created.stderr);
  const described = await schedule('describe', 'nightly');
  assert.equal(described.code, 0, described.stderr);
  const lines = described.stdout.trim().split('\n');
  assert.match(lines[0]!, /^schedule nightly: paused/);
  assert.ok(lines.includes('  when:     calendar 30 2 * * MONDAY-FRIDAY in UTC'), described.stdout);
  assert.ok(lines.includes('  overlap:  skip, catch-up window 2h'), described.stdout);
  assert.match(described.stdout, /^ {2}next: {5}\d{4}-\d\d-\d\dT02:30:00\.000Z/m);
  assert.doesNotMatch(described.stdout, /[{}]/, 'no raw JSON');
  const json = JSON.parse((await schedule('describe', 'nightly', '--json')).stdout) as { id: string; paused: boolean };
  assert.deepEqual([json.id, json.paused], ['nightly', true]);
});
