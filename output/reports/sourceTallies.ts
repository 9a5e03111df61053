/** What each source's committed shards hold, from their manifests: the counts targets are measured in. */
import { mapLimit } from '../../domain/mapLimit.js';
import type { SourceTally } from '../../domain/targets.js';
import type { BuildPlan } from '../../pipeline/planning/planBuild.types.js';
import { getJson, type ObjectStore } from '../../storage/objectStore.js';
import type { BuildLayout } from '../../storage/buildLayout.js';
import type { ShardManifest } from '../contracts/manifest.js';

/** The manifests of shards [0, count), by shard; undefined for a shard not committed. */
export function readManifests(store: ObjectStore, layout: BuildLayout, count: number): Promise<Array<ShardManifest | undefined>> {
  const shards = Array.from({ length: count }, (_, shard) => shard);
  return mapLimit(shards, 32, (shard) => getJson<ShardManifest>(store, layout.manifest(shard)));
}

/** The same, from manifests already read (by shard). */
export function talliesFrom(plan: BuildPlan, manifests: ReadonlyArray<ShardManifest | undefined>): SourceTally[] {
  const tallies: SourceTally[] = plan.sources.map((s) => ({ planned: 0, instruct: 0, dpo: 0, exhausted: s.exhausted }));
  for (const [shard, manifest] of manifests.entries()) {
    if (!manifest) continue;
    const tally = tallies[plan.shardSources[shard]!]!;
    tally.planned += manifest.counts.planned;
    tally.instruct += manifest.counts.instruct;
    tally.dpo += manifest.counts.dpo;
  }
  return tallies;
}
