/**
 * Reads one shard's samples from the plan the build stored when it started, so every activity of a
 * shard works on exactly the samples the plan fixed.
 */
import type { SourceSample } from '../domain/sample.js';
import { buildLayout, type BuildLayout } from '../storage/buildLayout.js';
import { getJson, type ObjectStore } from '../storage/objectStore.js';
import type { ShardTask } from './buildRef.js';
import { storeFor } from './runtime.js';

/** The samples of one shard, as the build's plan fixed them. */
export async function loadShardPlan(task: ShardTask): Promise<SourceSample[]> {
  return shardPlanIn(storeFor(task.build.output, task.build.s3), buildLayout(task.build.buildId), task.shard);
}

/** The same, from a store and layout already open. */
export async function shardPlanIn(store: ObjectStore, layout: BuildLayout, shard: number): Promise<SourceSample[]> {
  const samples = await getJson<SourceSample[]>(store, layout.shardPlan(shard));
  if (!samples) throw new Error(`build '${layout.root}': no plan for shard ${shard} in ${store.root}`);
  return samples;
}
