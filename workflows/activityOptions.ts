/**
 * The Temporal options (timeouts, heartbeat, retry policy) every pipeline activity runs with,
 * derived from the build's retry settings in one place.
 */
import type { ActivityOptions } from '@temporalio/workflow';
import type { BuildConfig } from '../config/buildConfig.js';

export type RetrySettings = BuildConfig['retry'];

/** How long one stage over a slice may take before Temporal gives up on the attempt (a safety net: a lost worker is noticed by the heartbeat timeout). */
const STAGE_SLICE_MINUTES = 30;

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
    startToCloseTimeout: `${STAGE_SLICE_MINUTES} minutes`,
    heartbeatTimeout: retry.heartbeatTimeoutSeconds * 1000,
    retry: {
      initialInterval: retry.initialIntervalSeconds * 1000,
      backoffCoefficient: 2,
      maximumInterval: retry.maximumIntervalSeconds * 1000,
      maximumAttempts: retry.maximumAttempts,
    },
  };
}

/**
 * A slice through `stages` stages in one activity (runSliceStages): it may take as long as those
 * stages one after another did. Its samples' waits for the worker's sample lanes get no extra time:
 * a slice that stands still, in line or in a stage, is failed by its no-progress watchdog
 * (activities/sliceWatchdog.ts), so this timeout only bounds a slice that keeps moving. The heartbeat
 * timeout, which notices a lost worker, is unchanged.
 */
export function sliceStagesActivityOptions(retry: RetrySettings, stages: number): ActivityOptions {
  return { ...pipelineActivityOptions(retry), startToCloseTimeout: `${STAGE_SLICE_MINUTES * stages} minutes` };
}

/**
 * Extracting a source's gzip'd tars (activities extractArchives): tens of GB at tens of MB/s may take
 * hours, so the attempt is bounded by its no-progress watchdog (no compressed byte read for
 * activities/archiveWatch.ts) and the heartbeat timeout, not by a fixed limit (ADR 0078).
 */
export function archiveActivityOptions(retry: RetrySettings): ActivityOptions {
  return { ...pipelineActivityOptions(retry), startToCloseTimeout: '7 days' };
}
