/**
 * Builds against an endpoint that misbehaves as real gateways and proxies do (test/harness/
 * hostileEndpoint.ts, in front of the simulator), on one stack (Temporal dev server, a worker in
 * this process, the `mmif` CLI): a key echoed in every encoding, with every file, log and history
 * payload the build produced scanned for it afterwards (test/harness/canaryScan.ts).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BuildConfigInput } from '../../config/buildConfig.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { LocalStore } from '../../storage/localStore.js';
import { getJson } from '../../storage/objectStore.js';
import { writeCc3m } from '../fixtures/cc3m.js';
import { captureLogs, filesText, historiesText, leakingFiles, leaks } from '../harness/canaryScan.js';
import { startHostileEndpoint, type HostileEndpoint } from '../harness/hostileEndpoint.js';
import { mmif } from '../harness/mmifCli.js';
import { startStack, type Stack } from '../harness/stack.js';

let stack: Stack;
let hostile: HostileEndpoint;
let dir: string;

before(async () => {
  stack = await startStack({ simulator: { seed: 23 }, taskQueue: 'mmif-hostile' });
  hostile = await startHostileEndpoint(stack.simulator.url);
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-hostile-e2e-'));
  await writeCc3m(new LocalStore(path.join(dir, 'cc3m')), 'files', { perShard: 4, shards: 1 });
});

after(async () => {
  await hostile?.close();
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const KEY_VARIABLE = 'MMIF_HOSTILE_KEY';

const config = (buildId: string, more: Partial<BuildConfigInput> = {}): BuildConfigInput => ({
  buildId,
  seed: 11,
  output: path.join(dir, buildId),
  sources: [{ type: 'cc3m', uri: path.join(dir, 'cc3m') }],
  maxSamples: 4,
  shardSize: 4,
  models: { default: { model: 'mmif-sim-vlm', baseUrl: hostile.url, apiKeyEnv: KEY_VARIABLE } },
  ...more,
});

for (const key of ['sk-hostile/Canary+5f3a9c17=e2d8', 'Zq7shrt']) {
  test(`a key (${key.length} characters) echoed plain, base64 and URL-encoded in a refusal reaches no file, log or history payload of the build, nor the CLI's output`, async () => {
    process.env[KEY_VARIABLE] = key;
    const buildId = `canary-${key.length}`;
    hostile.set({ echoKey: true });
    const logs = captureLogs();
    let cli: Awaited<ReturnType<typeof mmif>>;
    let status: Awaited<ReturnType<typeof mmif>>;
    try {
      const file = path.join(dir, `${buildId}.json`);
      await writeFile(file, JSON.stringify(config(buildId)));
      cli = await mmif(stack, 'build', '--config', file, '--wait');
      status = await mmif(stack, 'status', buildId);
    } finally {
      logs.stop();
      hostile.set({});
    }
    assert.equal(cli.code, 0, cli.stdout + cli.stderr);
    const output = path.join(dir, buildId);
    const report = (await getJson<BuildReport>(new LocalStore(output), buildLayout(buildId).report))!;
    // The refusal was learned (temperature dropped) and its words kept, the key blanked in them.
    const lesson = report.endpointDialects?.[0]?.lessons.find((l) => l.startsWith('temperature'));
    assert.ok(lesson?.includes('***'), JSON.stringify(report.endpointDialects));
    const dialects = [...(await filesText(path.join(output, '_cache', 'llm', 'dialects'))).values()].join('\n');
    assert.ok(dialects.includes('"lessons"') && !dialects.includes('apiKey'), `no credential field in the dialect cache: ${dialects}`);
    assert.deepEqual(await leakingFiles(output, key), [], 'the key in an output file');
    const scanned = {
      log: logs.text(),
      cli: cli.stdout + cli.stderr + status.stdout + status.stderr,
      history: await historiesText(stack.client, buildId),
    };
    assert.ok(scanned.history.includes(`lessons`), 'payloads read');
    for (const [where, text] of Object.entries(scanned)) assert.deepEqual(leaks(text, key), [], `the key in the ${where}`);
    delete process.env[KEY_VARIABLE];
  });
}

test('a config value holding the key (a decontamination set under a folder named like it) enters the workflow input masked, by the client', async () => {
  const key = 'Dk9shrt';
  process.env[KEY_VARIABLE] = key;
  try {
    const input = config('key-in-path', { decontaminate: [{ name: 'bench', uri: path.join(dir, key, 'bench.jsonl'), format: 'jsonl' }] as BuildConfigInput['decontaminate'] });
    const handle = await stack.client.workflow.start('buildDataset', { taskQueue: 'mmif-hostile-nobody-polls', workflowId: 'key-in-path', args: [input] });
    const history = await historiesText(stack.client, 'key-in-path');
    await handle.terminate();
    assert.match(history, /\[secret MMIF_HOSTILE_KEY\]/);
    assert.deepEqual(leaks(history, key), []);
  } finally {
    delete process.env[KEY_VARIABLE];
  }
});
