/**
 * How long a build keeps retrying a call that fails transiently before it gives up, from the retry
 * settings themselves: each call is tried `llm.retry.maxAttempts` times with capped back-off
 * (llm/retryPolicy.ts), and after its last try the activity fails and Temporal retries it by the
 * pipeline activities' policy (workflows/activityOptions.ts) up to `retry.maximumAttempts` times.
 * The sum is the longest the back-off waits add up to (full jitter waits half of it on average);
 * each attempt's own time (a timeout, a refused connection at once) comes on top. Pre-flight prints
 * it when an endpoint answers transiently, so the user knows how long "starting anyway" may last.
 */
import type { BuildConfig } from '../config/buildConfig.js';
import { pipelineActivityOptions } from '../workflows/activityOptions.js';
import { backoffMs } from '../llm/retryPolicy.js';

/** The longest back-off waits of one call over all its activity attempts, in ms. */
export function retrySpanMs(config: Pick<BuildConfig, 'retry' | 'llm'>): number {
  const call = config.llm.retry;
  let perCall = 0;
  for (let attempt = 1; attempt < call.maxAttempts; attempt++) perCall += backoffMs(call, attempt, () => 1);
  const activity = pipelineActivityOptions(config.retry).retry!;
  const initial = Number(activity.initialInterval);
  let betweenActivities = 0;
  for (let attempt = 1; attempt < activity.maximumAttempts!; attempt++) {
    betweenActivities += Math.min(Number(activity.maximumInterval), initial * activity.backoffCoefficient! ** (attempt - 1));
  }
  return activity.maximumAttempts! * perCall + betweenActivities;
}

/** "calls are retried for up to about 8.2 min (6 tries per call, 8 attempts per shard) before the build gives up". */
export function retrySpanLine(config: Pick<BuildConfig, 'retry' | 'llm'>): string {
  const ms = retrySpanMs(config);
  const span = ms >= 120_000 ? `${(ms / 60_000).toFixed(1)} min` : `${Math.round(ms / 1000)} s`;
  return `calls are retried for up to about ${span} of back-off (llm.retry.maxAttempts ${config.llm.retry.maxAttempts} tries per call, retry.maximumAttempts ${config.retry.maximumAttempts} attempts per shard) before the build gives up`;
}
