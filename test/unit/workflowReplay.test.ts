/**
 * Replays the committed histories of real runs (test/replay/histories/, recorded by
 * test/replay/recordHistories.ts from today's code) against the current workflow code: a change that
 * alters the commands they expect (a new activity, another child id, a reordered stage) fails here
 * with a nondeterminism error. Running builds are pinned to the worker version that started them,
 * so such a change is deployed as a new version and the histories are re-recorded
 * (docs/adr/0017-compatibility-reset.md); an unintended one is caught. The bundle built for the
 * replay is also checked to hold no zod and no config schema: the sandbox parses nothing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import proto from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { prebuiltWorkflowBundle } from '../../worker/bundleProcess.js';

// CommonJS: its namespaces come through the default export.
const { History } = proto.temporal.api.history.v1;

const HISTORIES = fileURLToPath(new URL('../replay/histories/', import.meta.url));

/** The workflow bundle of these sources: the one a worker would start from, built here (no child process) if missing. */
let bundled: Promise<string> | undefined;
const bundle = () => (bundled ??= prebuiltWorkflowBundle('this process'));

test('the workflow bundle holds no zod and no config schema: the sandbox parses nothing', async () => {
  const code = await readFile(await bundle(), 'utf8');
  // Module ids of the bundle's own sources are their paths (./config/endpointRouting.ts); a package's, its node_modules path.
  assert.equal(code.includes('node_modules/zod/'), false, 'the workflow bundle holds zod');
  // Config modules may be there (the boundary test lists which), but none that defines a schema.
  const configModules = [...new Set(code.match(/\.\/config\/[\w/]+\.ts/g))];
  assert.ok(configModules.includes('./config/stages.ts'), `the stage descriptors are in the bundle: ${configModules.join(', ')}`);
  for (const module of configModules) {
    const source = await readFile(fileURLToPath(new URL(`../../${module.slice(2)}`, import.meta.url)), 'utf8');
    assert.doesNotMatch(source, /^import (?!type )[^;]*from 'zod'/m, `${module} in the workflow bundle imports zod`);
  }
});

test('every recorded build, eval and lease desk history replays against the current workflow code without nondeterminism', async () => {
  const files = (await readdir(HISTORIES)).filter((f) => f.endsWith('.json')).sort();
  // One of each kind recorded; a build, a targets build and the lease desk over several runs.
  for (const kind of [
    'replay-build@',
    'replay-targets@',
    'replay-batch@',
    'replay-batch_shard-0@',
    'replay-cancelled@',
    'replay-scheduled-',
    'replay-scheduled@',
    'eval-replay-eval@',
    'mmif-endpoint-leases-',
  ]) {
    assert.ok(
      files.some((f) => f.startsWith(kind)),
      `no recorded history for ${kind}`,
    );
  }
  assert.ok(files.filter((f) => f.startsWith('replay-build@')).length >= 2, 'a build that continued as new');

  async function* histories() {
    for (const file of files) {
      const recorded = JSON.parse(await readFile(HISTORIES + file, 'utf8')) as { workflowId: string; history: object };
      yield { workflowId: recorded.workflowId, history: History.fromObject(recorded.history) };
    }
  }
  const failures: string[] = [];
  let replayed = 0;
  for await (const result of Worker.runReplayHistories({ workflowBundle: { codePath: await bundle() }, replayName: 'mmif-replay' }, histories())) {
    replayed++;
    if (result.error) failures.push(`${result.workflowId} (${result.runId}): ${result.error.message}`);
  }
  assert.equal(replayed, files.length);
  assert.deepEqual(failures, []);
});
