/**
 * A build plan as the build workflow carries it: by reference. The whole plan (one entry per shard,
 * with every source's accounting) stays where planning wrote it, under the build's `_work/`; the
 * workflow's payloads hold its key, its counts and each shard's size and source run-length coded
 * (a run per source and round: a plan's shards are full but for each source's last of a round), so
 * a plan of tens of thousands of shards costs a few hundred bytes in history and through every
 * continue-as-new. Pure: the workflow expands it in memory (planOrder).
 */
import type { PlanOrder } from './commitOrder.js';
import type { TargetsOutcome } from './targets.js';

export interface PlanShape {
  /** Where the whole plan is stored (storage/buildLayout.ts planSummary). */
  key: string;
  configFingerprint: string;
  sampleCount: number;
  shardCount: number;
  /** First shard of each planning round. */
  rounds: number[];
  targetsOutcome?: TargetsOutcome;
  /** Shards in plan order as runs of [size, source, how many]. */
  runs: Array<[size: number, source: number, count: number]>;
}

/** A shape with its shards expanded: what the workflow plans its shards and commits with. */
export type ExpandedPlan = PlanShape & { shardSizes: number[]; shardSources: number[] };

/** The shape of `plan`, stored at `key`. */
export function planShape(plan: PlanOrder & Pick<PlanShape, 'configFingerprint' | 'sampleCount' | 'shardCount' | 'rounds' | 'targetsOutcome'>, key: string): PlanShape {
  const runs: PlanShape['runs'] = [];
  plan.shardSizes.forEach((size, shard) => {
    const source = plan.shardSources[shard]!;
    const last = runs.at(-1);
    if (last && last[0] === size && last[1] === source) last[2] += 1;
    else runs.push([size, source, 1]);
  });
  return {
    key,
    configFingerprint: plan.configFingerprint,
    sampleCount: plan.sampleCount,
    shardCount: plan.shardCount,
    rounds: [...plan.rounds],
    ...(plan.targetsOutcome ? { targetsOutcome: plan.targetsOutcome } : {}),
    runs,
  };
}

/** The shape with each shard's size and source written out. */
export function expandPlan(shape: PlanShape): ExpandedPlan {
  const shardSizes: number[] = [];
  const shardSources: number[] = [];
  for (const [size, source, count] of shape.runs) {
    for (let i = 0; i < count; i++) {
      shardSizes.push(size);
      shardSources.push(source);
    }
  }
  return { ...shape, shardSizes, shardSources };
}

/** The shape of an expanded plan, as carried. */
export function shapeOf(plan: ExpandedPlan): PlanShape {
  const { key, configFingerprint, sampleCount, shardCount, rounds, targetsOutcome, runs } = plan;
  return { key, configFingerprint, sampleCount, shardCount, rounds, ...(targetsOutcome ? { targetsOutcome } : {}), runs };
}
