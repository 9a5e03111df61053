/**
 * The other half of dropping a late duplicate from a targets build (lateDuplicates.ts): the shards
 * of its source committed after it were capped counting the dropped record, so one of them may have
 * trimmed an accepted sample (over-target) that the source now owes. They are committed again, in
 * rank order, with caps from what the shards before them keep now (domain/commitOrder.ts
 * capsToRecommit), before the next round is planned: the records kept stay the lowest-ranked
 * accepted ones, and a resumed build recommits the same bytes (every cap is a function of the plan
 * and committed counts).
 */
import { capsToRecommit, type CapsEffect, type Kept, type PlanOrder } from '../../domain/commitOrder.js';
import type { Goals } from '../../domain/targets.js';
import type { BuildLayout } from '../../storage/buildLayout.js';
import { mapLimit } from '../../domain/mapLimit.js';
import { getJson, type ObjectStore } from '../../storage/objectStore.js';
import type { ShardManifest } from '../contracts/manifest.js';

/** The reason code of a record trimmed by its shard's caps (output/commit/overTarget.ts). */
const OVER_TARGET = 'over-target';

/**
 * Commits again (through `recommit`) every committed shard whose records its caps, recomputed from
 * what the earlier shards of its source keep now, would change; returns them. A source is walked up
 * to its first shard not committed: the caps of the shards after it depend on what it will keep.
 */
export async function recommitTrimmedShards(
  store: ObjectStore,
  layout: BuildLayout,
  plan: PlanOrder,
  goals: readonly Goals[],
  recommit: (shard: number, manifest: ShardManifest, caps: Goals) => Promise<ShardManifest>,
): Promise<number[]> {
  const shards = plan.shardSizes.map((_, shard) => shard);
  const manifests = await mapLimit(shards, 32, (shard) => getJson<ShardManifest>(store, layout.manifest(shard)));
  const keptBefore: Kept[] = goals.map(() => ({ instruct: 0, dpo: 0 }));
  const blocked = new Set<number>();
  const recommitted: number[] = [];
  for (const [shard, read] of manifests.entries()) {
    const source = plan.shardSources[shard]!;
    if (blocked.has(source)) continue;
    if (!read) {
      blocked.add(source);
      continue;
    }
    let manifest = read;
    const caps = manifest.targetCaps ? capsToRecommit(goals[source]!, keptBefore[source]!, capsEffect(manifest)) : undefined;
    if (caps) {
      manifest = await recommit(shard, manifest, caps);
      recommitted.push(shard);
    }
    keptBefore[source]!.instruct += manifest.counts.instruct;
    keptBefore[source]!.dpo += manifest.counts.dpo;
  }
  return recommitted;
}

/**
 * What a committed shard kept and trimmed, from its manifest: over-target samples are trimmed instruct
 * records, the other over-target rejects trimmed pairs.
 */
function capsEffect(manifest: ShardManifest): CapsEffect {
  const kept = { instruct: manifest.counts.instruct, dpo: manifest.counts.dpo };
  const samples = manifest.rejectedSamplesByReason[OVER_TARGET] ?? 0;
  return { kept, trimmed: { instruct: samples, dpo: (manifest.rejectsByReason[OVER_TARGET] ?? 0) - samples } };
}
