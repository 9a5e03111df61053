/** The workflow ids a build may run under (domain/buildWorkflowId.ts): its buildId, or a schedule's dated run of it. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { scheduledRunWorkflowId, workflowIdRefusal } from '../../domain/buildWorkflowId.js';

test('a build runs under its buildId and under the dated id a schedule gives it', () => {
  assert.equal(workflowIdRefusal('nightly', 'nightly'), undefined);
  assert.equal(workflowIdRefusal(scheduledRunWorkflowId('nightly', '2026-11-01'), 'nightly'), undefined);
});

test('any other id is refused with the id to start it under', () => {
  assert.equal(
    workflowIdRefusal('my-build-1', 'cc3m-v1'),
    "workflow id 'my-build-1' is not the config's buildId 'cc3m-v1': start the build with --workflow-id cc3m-v1 (mmif status and resume find builds by their buildId)",
  );
  // Near misses of the dated form: another build's prefix, a suffix that is not a date, a shard child's id.
  for (const id of ['nightly-2@2026-11-01', 'nightly@latest', 'nightly@2026-11-01x', 'nightly/shard-0', 'nightl']) {
    assert.match(workflowIdRefusal(id, 'nightly') ?? '', /^workflow id '/, id);
  }
});
