/**
 * The seeded order of a source's samples: each ranked by sha256(seed, sampleId), lowest first.
 * Reproducible, independent of listing order, and stable under growth.
 */
import type { BuildConfig } from '../../config/buildConfig.js';
import { sha256Hex } from '../../domain/hashing.js';
import type { SourceSample } from '../../domain/sample.js';
import type { SourceSegment, SourceReader } from '../../sources/contract.js';

export function cutShards<T>(samples: readonly T[], shardSize: number): T[][] {
  const shards: T[][] = [];
  for (let from = 0; from < samples.length; from += shardSize) shards.push(samples.slice(from, from + shardSize));
  return shards;
}

/** The samples of ranks [from, to) of a source's seeded order (fewer when the source runs out). */
export async function rankedSlice(config: BuildConfig, reader: SourceReader, from: number, to: number): Promise<SourceSample[]> {
  const selection = new LowestRanks<SourceSample>(to);
  for await (const segment of reader.segments()) offerSegment(selection, config.seed, segment);
  return selection.sorted().slice(from);
}

/** Ranks every sample of the segment; builds only those entering the lowest ranks. */
export function offerSegment(selection: LowestRanks<SourceSample>, seed: number, segment: SourceSegment): void {
  for (let i = 0; i < segment.sampleIds.length; i++) {
    const rank = sampleRank(seed, segment.sampleIds[i]!);
    if (selection.admits(rank)) selection.offer(rank, segment.sample(i));
  }
}

export const sampleRank = (seed: number, sampleId: string): string => sha256Hex(`${seed}\u0000${sampleId}`);

/** Keeps the `capacity` items of lowest rank seen so far (a max-heap on rank). */
export class LowestRanks<T> {
  private readonly heap: Array<{ rank: string; item: T }> = [];
  constructor(private readonly capacity: number) {}

  /** Whether an item of this rank would be kept now. */
  admits(rank: string): boolean {
    return this.heap.length < this.capacity || (this.capacity > 0 && rank < this.heap[0]!.rank);
  }

  offer(rank: string, item: T): void {
    if (this.capacity === 0) return;
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
