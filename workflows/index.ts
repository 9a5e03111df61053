// The workflow bundle's entry point: every workflow type the worker registers, and how each moves
// between worker versions (docs/adr/0008-worker-versioning.md). PINNED: a run finishes on the code
// that started it, so changing it needs no patch. AUTO_UPGRADE: a run moves to the current version
// at its next task, so a change to it that running histories would not replay needs a patch (the SDK's patched).
import type { Workflow } from '@temporalio/common';
import { setWorkflowOptions } from '@temporalio/workflow';
import { buildChecks } from './buildChecks.js';
import { buildDataset } from './buildDataset.js';
import { buildShard } from './buildShard.js';
import { endpointLeases } from './endpointLeases.js';
import { evaluateModel } from './evaluateModel.js';
import { scheduledBuild } from './scheduledBuild.js';

export { buildDataset, progressQuery, retryFailedShardsUpdate } from './buildDataset.js';
export { buildShard } from './buildShard.js';
export { scheduledBuild } from './scheduledBuild.js';
export { endpointLeases, reportDemandUpdate } from './endpointLeases.js';
export { evaluateModel, evalProgressQuery } from './evaluateModel.js';
export { buildChecks } from './buildChecks.js';

const PINNED: Workflow[] = [buildDataset, buildShard, evaluateModel];
for (const pinned of PINNED) setWorkflowOptions({ versioningBehavior: 'PINNED' }, pinned);
// The lease desk lives as long as its task queue; the schedule's starter and the pre-flight checks
// only start a build or answer before one.
const AUTO_UPGRADE: Workflow[] = [endpointLeases, scheduledBuild, buildChecks];
for (const upgrading of AUTO_UPGRADE) setWorkflowOptions({ versioningBehavior: 'AUTO_UPGRADE' }, upgrading);
