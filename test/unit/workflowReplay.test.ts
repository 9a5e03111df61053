/**
 * Replays the committed histories of real builds (test/replay/histories/, recorded by
 * test/replay/recordHistories.ts) against the current workflow code. A change that alters the
 * commands an existing history expects (a new activity, another child id, a reordered step) fails
 * here with a nondeterminism error, as it would fail every build running while it is deployed: gate
 * it with patched() (docs/operations.md, "Operating in production") instead of re-recording.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import proto from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { bundleWorkflows } from '../../worker/bundleProcess.js';

// CommonJS: its namespaces come through the default export.
const { History } = proto.temporal.api.history.v1;

const HISTORIES = fileURLToPath(new URL('../replay/histories/', import.meta.url));

test('every recorded build, eval and lease desk history replays against the current workflow code without nondeterminism', async () => {
  const files = (await readdir(HISTORIES)).filter((f) => f.endsWith('.json')).sort();
  // The kinds of history a running build can have; each must be among the recordings.
  for (const kind of [
    'replay-single-shard@',
    'replay-failed-then-retried@',
    'replay-batch-api@',
    'replay-batch-wait_shard-0@',
    'replay-slice-flow_shard-0@',
    'replay-lanes@',
    'replay-lanes_shard-0@',
    'replay-targets@',
    'replay-overlap@',
    'replay-overlap-exact@',
    'replay-cancelled@',
    'replay-resolved@',
    'replay-resolved-bad@',
    'eval-replay-resolved-eval@',
    'replay-scheduled-',
    'replay-scheduled@',
    'eval-replay-eval-single@',
    'eval-replay-eval-chats@',
  ]) {
    assert.ok(
      files.some((f) => f.startsWith(kind)),
      `no recorded history for ${kind}`,
    );
  }
  assert.ok(files.filter((f) => f.startsWith('replay-continue-as-new@')).length >= 2, 'a build that continued as new');
  assert.ok(files.filter((f) => f.startsWith('mmif-endpoint-leases-')).length >= 2, 'a lease desk that continued as new, then ended');

  async function* histories() {
    for (const file of files) {
      const recorded = JSON.parse(await readFile(HISTORIES + file, 'utf8')) as { workflowId: string; history: object };
      yield { workflowId: recorded.workflowId, history: History.fromObject(recorded.history) };
    }
  }
  const failures: string[] = [];
  let replayed = 0;
  for await (const result of Worker.runReplayHistories({ workflowBundle: await bundleWorkflows(), replayName: 'mmif-replay' }, histories())) {
    replayed++;
    if (result.error) failures.push(`${result.workflowId} (${result.runId}): ${result.error.message}`);
  }
  assert.equal(replayed, files.length);
  assert.deepEqual(failures, []);
});
