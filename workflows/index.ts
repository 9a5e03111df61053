// The workflow bundle's entry point: every workflow type the worker registers.
export { buildDataset, progressQuery, retryFailedShardsUpdate } from './buildDataset.js';
export { buildShard } from './buildShard.js';
export { scheduledBuild } from './scheduledBuild.js';
export { endpointLeases, reportDemandUpdate } from './endpointLeases.js';
export { evaluateModel, evalProgressQuery } from './evaluateModel.js';
export { buildChecks } from './buildChecks.js';
