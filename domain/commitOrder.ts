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
import { commitCaps, RECORD_KINDS, type Goals, type RecordKind, type SourceTally } from './targets.js';

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

/** What a committed shard's caps did: the accepted records it kept, and those it trimmed as over-target. */
export interface CapsEffect {
  kept: Kept;
  trimmed: Kept;
}

/**
 * The caps a committed shard must be committed again with, or undefined while its records stay as
 * they are. Its caps counted what the earlier shards of its source kept when it committed; a late
 * duplicate dropped from one of them since (pipeline/stages/image/imageClaims.ts) lowers that count, so a shard
 * trimmed by it would now keep more of its accepted samples: the lower ranks, which a new round
 * must not be planned in place of.
 */
export function capsToRecommit(goals: Goals, keptBefore: Kept, shard: CapsEffect): Goals | undefined {
  const caps = commitCaps(goals, keptBefore);
  const changes = RECORD_KINDS.some((kind) => caps[kind] !== undefined && Math.min(shard.kept[kind] + shard.trimmed[kind], caps[kind]) !== shard.kept[kind]);
  return changes ? caps : undefined;
}
