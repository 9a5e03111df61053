/**
 * When a shard of a targets build may commit, and with which caps, so that the records kept are the
 * lowest-ranked accepted ones whatever order its shards finish in. A source's shards are in rank
 * order in the plan (each top-up round appends further ranks). Pure: the build workflow calls it as
 * shards finish and commit.
 *
 * A shard whose source would still owe at least its size even if every earlier shard of the source
 * kept all its samples can never be trimmed: it commits as soon as it has run, with caps from that
 * bound (a function of the plan alone). Any other shard commits once every earlier shard of its
 * source has, capped by what they kept. Either way its caps are a function of the plan and committed
 * counts, never of timing: a resumed or replayed build commits the same bytes.
 */
import { commitCaps, type Goals, type RecordKind, type SourceTally } from './targets.js';

/** The shape of a plan that commit order depends on: each shard's size and source, in plan order. */
export interface PlanOrder {
  shardSizes: readonly number[];
  shardSources: readonly number[];
}

/** Accepted records a committed shard kept. */
export type Kept = Pick<SourceTally, RecordKind>;

/** The caps `shard` commits with now, or undefined while an earlier shard of its source it depends on is not committed. */
export function capsWhenDue(plan: PlanOrder, goals: readonly Goals[], shard: number, committed: ReadonlyMap<number, Kept>): Goals | undefined {
  const source = plan.shardSources[shard]!;
  const size = plan.shardSizes[shard]!;
  let planned = 0;
  let waiting = false;
  const kept: Kept = { instruct: 0, dpo: 0 };
  for (let earlier = 0; earlier < shard; earlier++) {
    if (plan.shardSources[earlier] !== source) continue;
    planned += plan.shardSizes[earlier]!;
    const counts = committed.get(earlier);
    if (!counts) waiting = true;
    else {
      kept.instruct += counts.instruct;
      kept.dpo += counts.dpo;
    }
  }
  const unbound = commitCaps(goals[source]!, { instruct: planned, dpo: planned });
  if (Object.values(unbound).every((cap) => cap >= size)) return unbound;
  return waiting ? undefined : commitCaps(goals[source]!, kept);
}
