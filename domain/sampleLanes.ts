/**
 * How many sample lanes a build's endpoints need, and how many samples the build keeps dispatched to
 * feed them: both from the endpoints' slots (the requests in flight their configured `concurrency`
 * allows together), so nobody tunes lanes by hand. A lane (docs/architecture.md, glossary) is one
 * sample in flight through its stages; its model calls go one after another.
 * Pure: the build workflow sizes its shards in flight with it, the worker its lanes (activities/runtime.ts).
 */

/**
 * Lanes per endpoint slot: a lane's sample is between calls part of the time, so one lane per slot
 * leaves slots empty; with more, the endpoint's admission queue has the next request waiting, its body
 * held (3 per slot at most). docs/adr/0015-four-sample-lanes-per-endpoint-slot.md.
 */
export const LANES_PER_SLOT = 4;

/**
 * Samples dispatched (in running slice activities, waiting or in a lane) per lane: the line a lane
 * takes its next sample from the moment its sample ends. Below 1 lanes idle in every tail; each
 * sample beyond waits its turn inside a running activity, so it is kept small.
 */
export const DISPATCHED_PER_LANE = 1.5;

/** Sample lanes for all workers together: LANES_PER_SLOT per endpoint slot. */
export function sampleLanes(endpointSlots: number): number {
  return Math.max(1, Math.ceil(LANES_PER_SLOT * endpointSlots));
}

/** One worker's lanes, when `workers` share the endpoints: a 1/N part of them, at least one. */
export function workerLanes(endpointSlots: number, workers: number): number {
  return Math.max(1, Math.ceil(sampleLanes(endpointSlots) / Math.max(1, workers)));
}

/**
 * Shards in flight at least (and a Batch API build's, whose shards go stage by stage without lanes):
 * a few, so one shard's start and end overlap the others' work even for a small endpoint.
 */
export const MIN_SHARDS_IN_FLIGHT = 4;

/**
 * Shards to keep in flight so every lane has a sample waiting: DISPATCHED_PER_LANE x the lanes, over
 * the samples a running shard has dispatched (its slices in flight, at most its whole size); at
 * least MIN_SHARDS_IN_FLIGHT.
 */
export function shardsToFeedLanes(endpointSlots: number, shard: { shardSize: number; sliceSize: number; parallelSlices: number }): number {
  const dispatched = Math.min(shard.shardSize, shard.sliceSize * shard.parallelSlices);
  return Math.max(MIN_SHARDS_IN_FLIGHT, Math.ceil((DISPATCHED_PER_LANE * sampleLanes(endpointSlots)) / dispatched));
}
