import type { ActivityOptions } from '@temporalio/workflow';
import type { BuildConfig } from '../config/buildConfig.js';

export type RetrySettings = BuildConfig['retry'];

/**
 * One policy for every pipeline activity. Activities heartbeat every second, so a dead worker is
 * noticed after `heartbeatTimeoutSeconds`; transient failures (endpoint 5xx/timeouts after the client's own retries, store outages)
 * back off exponentially; after the last attempt the shard is reported as failed. Permanent errors
 * (domain/errors.ts: bad config, unreadable source, an endpoint refusing the key or model, a spent
 * error budget) are never retried: the worker fails their activities non-retryably, so no list of
 * error types is kept here.
 */
export function pipelineActivityOptions(retry: RetrySettings): ActivityOptions {
  return {
    startToCloseTimeout: '30 minutes',
    heartbeatTimeout: retry.heartbeatTimeoutSeconds * 1000,
    retry: {
      initialInterval: retry.initialIntervalSeconds * 1000,
      backoffCoefficient: 2,
      maximumInterval: retry.maximumIntervalSeconds * 1000,
      maximumAttempts: retry.maximumAttempts,
    },
  };
}
