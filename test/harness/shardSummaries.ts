/**
 * A committed shard's summary as tests make it up (the workflow tests' stubbed activities, the
 * progress arithmetic, the 50,000-shard plan): one definition, so a new ShardSummary field is
 * filled in one place. No import beyond types, so unit tests use it too.
 */
import type { ShardSummary } from '../../activities/buildRef.js';

/** A committed shard's summary: `planned` samples, `instruct` and `dpo` records kept, the rest rejected. */
export function stubSummary(shard: number, planned: number, instruct: number, dpo: number): ShardSummary {
  return {
    shard,
    planned,
    instruct,
    dpo,
    rejectedSamples: planned - instruct,
    rejectedPairs: 0,
    rejectsByStage: {},
    rejectsByReason: {},
    usage: {},
    simulated: true,
    modelCallRejects: 0,
    revision: 1,
  };
}
