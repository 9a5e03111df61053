/**
 * Duplicates kept because of timing: a shard commits, and only then does a lower rank in another
 * shard claim the same image (pipeline/stages/image/imageClaims.ts), so the committed shard still holds the sample
 * that lost. The takeover left a mark naming that sample; this finds the committed shards that still
 * keep a marked sample, for the build to commit them again (their commit rejects it as a duplicate).
 */
import { mapLimit } from '../../domain/mapLimit.js';
import type { SourceSample } from '../../domain/sample.js';
import type { BuildLayout } from '../../storage/buildLayout.js';
import { getJson, type ObjectStore } from '../../storage/objectStore.js';
import type { ShardManifest } from '../contracts/manifest.js';
import type { RejectRecord } from '../contracts/records.js';

/** Committed shards (with their manifests) that keep a sample whose dedupe claim a lower rank took over since. */
export async function shardsKeepingLostClaims(store: ObjectStore, layout: BuildLayout, shardCount: number): Promise<Array<{ shard: number; manifest: ShardManifest }>> {
  const losers = new Set<string>();
  for await (const { key } of store.list(layout.lostClaimsPrefix)) losers.add(key.slice(layout.lostClaimsPrefix.length).replace(/\.json$/, ''));
  if (losers.size === 0) return [];
  const shards = Array.from({ length: shardCount }, (_, shard) => shard);
  const found = await mapLimit(shards, 16, async (shard) => {
    const manifest = await getJson<ShardManifest>(store, layout.manifest(shard));
    if (!manifest) return undefined;
    const marked = ((await getJson<SourceSample[]>(store, layout.shardPlan(shard))) ?? []).filter((s) => losers.has(s.sampleId));
    if (marked.length === 0) return undefined;
    // A marked sample its commit already rejected (as a duplicate, or for a reason of its own) is not kept.
    const rejected = new Set(
      ((await store.get(layout.rejects(shard)))?.toString('utf8') ?? '')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as RejectRecord)
        .filter((r) => r.kind === 'sample')
        .map((r) => r.id),
    );
    return marked.some((s) => !rejected.has(s.sampleId)) ? { shard, manifest } : undefined;
  });
  return found.filter((f): f is { shard: number; manifest: ShardManifest } => f !== undefined);
}
