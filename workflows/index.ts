// The workflow bundle's entry point: every workflow type the worker registers.
export { buildDataset, progressQuery } from './buildDataset.js';
export { buildShard } from './buildShard.js';
