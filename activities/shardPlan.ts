import type { SourceSample } from '../domain/sample.js';
import { buildLayout } from '../storage/buildLayout.js';
import { getJson } from '../storage/objectStore.js';
import type { ShardTask } from './buildRef.js';
import { storeFor } from './runtime.js';

/** The samples of one shard, as the build's plan fixed them. */
export async function loadShardPlan(task: ShardTask): Promise<SourceSample[]> {
  const store = storeFor(task.build.output, task.build.s3);
  const samples = await getJson<SourceSample[]>(store, buildLayout(task.build.buildId).shardPlan(task.shard));
  if (!samples) throw new Error(`build '${task.build.buildId}': no plan for shard ${task.shard} in ${store.root}`);
  return samples;
}
