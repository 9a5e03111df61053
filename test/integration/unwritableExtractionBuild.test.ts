/**
 * A build started without its checks (no worker polled in time, a schedule, `mmif resume`) extracts
 * its sources' gzip'd tars itself (the extractArchives activity, ADR 0079): a root whose extraction
 * cache cannot be written fails the build, non-retryably, in the one line the checks print for it,
 * naming the root and the cause, before anything is planned. The checks' side is asserted in
 * test/e2e/hubLayouts.test.ts (validate and build --local).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildLayout } from '../../storage/buildLayout.js';
import { failureLine } from '../harness/buildFailure.js';
import { startStack, type Stack } from '../harness/stack.js';

const MULTIUI_TGZ = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'hub', 'data', 'multiui-tgz');

let stack: Stack;
let dir: string;

before(async () => {
  stack = await startStack({ taskQueue: 'mmif-unwritable-cache' });
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-unwritable-cache-'));
});

after(async () => {
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('a build whose source root cannot hold the extraction cache fails in one line naming the root and the cause, planning nothing', async () => {
  const root = path.join(dir, 'multiui');
  await cp(MULTIUI_TGZ, root, { recursive: true });
  await writeFile(path.join(root, '.mmif-extracted'), 'a file where the cache folder goes');
  const output = path.join(dir, 'out');
  const input = {
    buildId: 'cache-refused',
    output,
    sources: [{ type: 'multiui', uri: root }],
    maxSamples: 4,
    retry: { maximumAttempts: 2, initialIntervalSeconds: 0.1, maximumIntervalSeconds: 0.1 },
    llm: { preflight: false },
    models: { default: { model: 'mmif-sim-vlm' } },
  };
  const err = await stack.client.workflow.execute('buildDataset', { taskQueue: stack.taskQueue, workflowId: 'cache-refused', args: [input] }).then(
    () => assert.fail('the build should fail'),
    (e: unknown) => e,
  );
  const line = failureLine(err);
  assert.ok(line.startsWith(`${root}: cannot write the extraction cache .mmif-extracted/multiui.tar.gz/ of multiui.tar.gz: `), line);
  assert.doesNotMatch(line, /\n/);
  assert.equal(existsSync(path.join(output, buildLayout('cache-refused').planSummary)), false, 'nothing planned');
});
