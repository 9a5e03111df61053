/**
 * The workflows of the stubbed-activity tests (test/harness/stubbedBuild.ts): the real buildDataset,
 * and in place of workflows/buildShard.ts a shard child whose outcome the test decides. buildDataset
 * starts its children by workflow type name, so this `buildShard` is the one its worker runs. The
 * shard asks an activity for its outcome, then waits that many seconds on a workflow timer: the
 * time-skipping server fires the timers in order, so a test sets the order shards finish in.
 */
import { ApplicationFailure, proxyActivities, sleep } from '@temporalio/workflow';
import type { ShardSummary } from '../../activities/buildRef.js';
import { noTallies, type Tallies } from '../../domain/tallies.js';
import type { DeferredShard } from '../../workflows/buildShard.js';

export { buildDataset } from '../../workflows/buildDataset.js';

/** What a stubbed shard does: run `seconds`, then fail with `error` or end with `summary` (null: left for the build to commit, with `tallies`). */
export interface StubShardOutcome {
  seconds: number;
  error?: string;
  summary: ShardSummary | null;
  tallies?: Tallies;
}

/** The shard's input fields the stub reads (workflows/buildShard.ts takes more). */
export interface StubShardInput {
  shard: number;
  sampleCount: number;
  deferCommit: boolean;
}

export interface StubShardActivities {
  shardOutcome(input: StubShardInput): Promise<StubShardOutcome>;
}

const { shardOutcome } = proxyActivities<StubShardActivities>({ startToCloseTimeout: '1 minute', retry: { maximumAttempts: 1 } });

export async function buildShard(input: StubShardInput): Promise<ShardSummary | DeferredShard> {
  const outcome = await shardOutcome({ shard: input.shard, sampleCount: input.sampleCount, deferCommit: input.deferCommit });
  await sleep(outcome.seconds * 1000);
  if (outcome.error) throw ApplicationFailure.nonRetryable(outcome.error, 'StubShardFailed');
  return outcome.summary ?? { deferred: true, ...(outcome.tallies ?? noTallies()) };
}
