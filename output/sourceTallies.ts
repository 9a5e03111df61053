/** What each source's committed shards hold, from their manifests: the counts targets are measured in. */
import { mapLimit } from '../domain/mapLimit.js';
import type { SourceTally } from '../domain/targets.js';
import type { BuildPlan } from '../pipeline/planBuild.js';
import { getJson, type ObjectStore } from '../storage/objectStore.js';
import type { BuildLayout } from '../storage/buildLayout.js';
import type { ShardManifest } from './manifest.js';

/** Per source: samples planned and records kept by its committed shards (those before shard `to`). */
export async function sourceTallies(store: ObjectStore, layout: BuildLayout, plan: BuildPlan, to = plan.shardCount): Promise<SourceTally[]> {
  const tallies: SourceTally[] = plan.sources.map((s) => ({ planned: 0, instruct: 0, dpo: 0, exhausted: s.exhausted }));
  const shards = Array.from({ length: to }, (_, shard) => shard);
  const manifests = await mapLimit(shards, 32, (shard) => getJson<ShardManifest>(store, layout.manifest(shard)));
  for (const [shard, manifest] of manifests.entries()) {
    if (!manifest) continue;
    const tally = tallies[plan.shardSources[shard]!]!;
    tally.planned += manifest.counts.planned;
    tally.instruct += manifest.counts.instruct;
    tally.dpo += manifest.counts.dpo;
  }
  return tallies;
}

