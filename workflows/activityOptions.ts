import type { ActivityOptions } from '@temporalio/workflow';

/**
 * One policy for every pipeline activity. Heartbeats every 5 s let a dead worker be noticed in
 * 30 s; transient failures (endpoint 5xx/timeouts after the SDK's own retries, store outages)
 * back off up to 2 minutes; after 8 attempts the shard is reported as failed.
 */
export const PIPELINE_ACTIVITY: ActivityOptions = {
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '30 seconds',
  retry: {
    initialInterval: '2 seconds',
    backoffCoefficient: 2,
    maximumInterval: '2 minutes',
    maximumAttempts: 8,
    nonRetryableErrorTypes: ['ConfigError', 'ConfigMismatchError', 'SourceError'],
  },
};
