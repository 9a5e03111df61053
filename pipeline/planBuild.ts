/**
 * Plans a build: streams every source, selects `maxSamples` samples and cuts them into shards.
 *
 * Selection ranks each sample by sha256(seed, sampleId) and keeps the lowest ranks. The choice is
 * therefore reproducible, independent of listing order, and stable under growth: raising
 * maxSamples keeps every earlier pick (and its shard position) and only appends new ones.
 * Memory is bounded by maxSamples, not by the dataset size.
 */
import { fingerprintMaterial, type BuildConfig } from '../config/buildConfig.js';
import { sha256Hex } from '../domain/hashing.js';
import type { SourceSample } from '../domain/sample.js';
import type { BuildLayout } from '../output/layout.js';
import { isProblem, type SourceProblem, type SourceReader } from '../sources/source.js';
import { getJson, putJson, type ObjectStore } from '../storage/objectStore.js';

export interface BuildPlan {
  configFingerprint: string;
  sampleCount: number;
  shardCount: number;
  /** Damaged source units, listed in rejects/source-problems.jsonl. */
  sourceProblems: number;
}

export interface StoredConfig {
  configFingerprint: string;
  config: BuildConfig;
}

export class ConfigMismatchError extends Error {
  override name = 'ConfigMismatchError';
}

export function configFingerprint(config: BuildConfig): string {
  return sha256Hex(fingerprintMaterial(config));
}

export async function planBuild(
  config: BuildConfig,
  store: ObjectStore,
  layout: BuildLayout,
  sources: readonly SourceReader[],
): Promise<BuildPlan> {
  const fingerprint = configFingerprint(config);
  const stored = await getJson<StoredConfig>(store, layout.config);
  if (stored && stored.configFingerprint !== fingerprint) {
    throw new ConfigMismatchError(
      `build '${config.buildId}' already exists in ${store.root} with a different config (fingerprint ` +
        `${stored.configFingerprint.slice(0, 12)}, now ${fingerprint.slice(0, 12)}); use a new buildId for a new version`,
    );
  }

  const planned = stored ? await getJson<BuildPlan>(store, layout.planSummary) : undefined;
  if (planned) return planned;

  const selection = new LowestRanks<SourceSample>(config.maxSamples);
  const problems: Array<SourceProblem & { source: string }> = [];
  for (const [index, reader] of sources.entries()) {
    for await (const item of reader.samples()) {
      if (isProblem(item)) problems.push({ ...item, source: config.sources[index]!.type });
      else selection.offer(sha256Hex(`${config.seed}\u0000${item.sampleId}`), item);
    }
  }
  const selected = selection.sorted();
  const shardCount = Math.ceil(selected.length / config.shardSize);
  for (let shard = 0; shard < shardCount; shard++) {
    await putJson(store, layout.shardPlan(shard), selected.slice(shard * config.shardSize, (shard + 1) * config.shardSize));
  }
  await store.put(layout.sourceProblems, problems.map((p) => `${JSON.stringify(p)}\n`).join(''));
  if (!stored) await putJson(store, layout.config, { configFingerprint: fingerprint, config } satisfies StoredConfig);
  const plan: BuildPlan = { configFingerprint: fingerprint, sampleCount: selected.length, shardCount, sourceProblems: problems.length };
  await putJson(store, layout.planSummary, plan);
  return plan;
}

/** Keeps the `capacity` items of lowest rank seen so far (a max-heap on rank). */
class LowestRanks<T> {
  private readonly heap: Array<{ rank: string; item: T }> = [];
  constructor(private readonly capacity: number) {}

  offer(rank: string, item: T): void {
    if (this.heap.length < this.capacity) {
      this.heap.push({ rank, item });
      this.siftUp(this.heap.length - 1);
    } else if (rank < this.heap[0]!.rank) {
      this.heap[0] = { rank, item };
      this.siftDown(0);
    }
  }

  sorted(): T[] {
    return [...this.heap].sort((a, b) => (a.rank < b.rank ? -1 : 1)).map((e) => e.item);
  }

  private siftUp(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.heap[parent]!.rank >= this.heap[i]!.rank) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private siftDown(i: number): void {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let largest = i;
      if (l < this.heap.length && this.heap[l]!.rank > this.heap[largest]!.rank) largest = l;
      if (r < this.heap.length && this.heap[r]!.rank > this.heap[largest]!.rank) largest = r;
      if (largest === i) return;
      this.swap(i, largest);
      i = largest;
    }
  }

  private swap(a: number, b: number): void {
    [this.heap[a], this.heap[b]] = [this.heap[b]!, this.heap[a]!];
  }
}
