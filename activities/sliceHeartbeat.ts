/**
 * What a stage slice's activity heartbeats (activities/index.ts, runStageSlice): its failed attempts
 * so far, by kind. Read back by the slice's next attempt, and by `mmif status` from the shard
 * workflow's pending activities (cli/liveProgress.ts) while Temporal retries it.
 */
import type { AttemptTally } from '../llm/attemptTally.js';

export interface SliceHeartbeat {
  failedAttempts: AttemptTally;
}

/** `details` as a slice's heartbeat, or undefined when it is none (no heartbeat yet, another activity's). */
export function sliceHeartbeat(details: unknown): SliceHeartbeat | undefined {
  if (typeof details !== 'object' || details === null) return undefined;
  const tally = (details as { failedAttempts?: unknown }).failedAttempts;
  if (typeof tally !== 'object' || tally === null) return undefined;
  const failedAttempts: AttemptTally = {};
  for (const [kind, n] of Object.entries(tally)) if (typeof n === 'number') failedAttempts[kind as keyof AttemptTally] = n;
  return { failedAttempts };
}
