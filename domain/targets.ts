/**
 * Targets counted in accepted records: how many records each source owes, how many samples each
 * planning round takes from it, and how many accepted records a shard may keep. Pure and
 * deterministic (the build workflow imports it): every decision is a function of the config and of
 * counts read from committed shards, never of timing. Round 0 plans a source's larger target over
 * `expectedYield`; a later round what meets the deficit with high confidence at the measured yield
 * (nextRound). Shards commit in rank order and keep accepted records only while their source still
 * owes them: the records kept are exactly the lowest-ranked accepted ones.
 */
import { samplesForRecords } from './yieldBound.js';

export const RECORD_KINDS = ['instruct', 'dpo'] as const;
export type RecordKind = (typeof RECORD_KINDS)[number];

/** Accepted records a source owes, by kind; an absent kind is not targeted (never trimmed). */
export type Goals = Partial<Record<RecordKind, number>>;

/** What a source has produced so far, read from its committed shards. */
export interface SourceTally {
  planned: number;
  instruct: number;
  dpo: number;
  /** The last round asked for more samples than the source had left. */
  exhausted: boolean;
}

export type TargetsOutcome = 'targets-met' | 'sources-exhausted' | 'round-limit' | 'sample-limit';

/**
 * The build settings targets are planned from. A build config is one (structurally); naming only
 * these keeps domain/ free of config/, which itself imports the domain's vocabulary.
 */
interface TargetsSettings {
  maxSamples: number;
  targets?: Goals & { expectedYield: number; maxRounds: number };
  sources: ReadonlyArray<{ targets?: Goals; weight?: number }>;
}

/**
 * Each source's goals: its own `targets`, or its share of the build's by `weight` (1 by default),
 * split like quotas (sourceShares). A kind the build does not target is targeted only on the
 * sources that name it.
 */
export function sourceGoals(config: TargetsSettings): Goals[] {
  const goals: Goals[] = config.sources.map(() => ({}));
  for (const kind of RECORD_KINDS) {
    const total = config.targets?.[kind];
    if (total === undefined) {
      // Not targeted build-wide: only sources that name their own target for this kind have one.
      for (const [i, s] of config.sources.entries()) {
        const own = s.targets?.[kind];
        if (own !== undefined) goals[i]![kind] = own;
      }
      continue;
    }
    const shares = sourceShares(
      total,
      config.sources.map((s) => ({ quota: s.targets?.[kind], weight: s.weight })),
    );
    shares.forEach((n, i) => (goals[i]![kind] = n));
  }
  return goals;
}

/**
 * A total split over sources: each `quota` as given, the rest of the total by `weight` (1 when a
 * source gives neither); shares are rounded down and the remainder goes to the largest fractions,
 * earlier sources first on ties.
 */
export function sourceShares(total: number, sources: ReadonlyArray<{ quota?: number; weight?: number }>): number[] {
  const remaining = Math.max(0, total - sources.reduce((n, s) => n + (s.quota ?? 0), 0));
  const weights = sources.map((s) => (s.quota !== undefined ? 0 : (s.weight ?? 1)));
  const weightSum = weights.reduce((a, b) => a + b, 0);
  const exact = weights.map((w) => (weightSum > 0 ? (remaining * w) / weightSum : 0));
  const shares = sources.map((s, i) => s.quota ?? Math.floor(exact[i]!));
  let left = remaining - shares.reduce((n, t, i) => n + (sources[i]!.quota === undefined ? t : 0), 0);
  const byFraction = exact
    .map((e, i) => ({ i, f: e - Math.floor(e) }))
    .filter(({ i }) => weights[i]! > 0)
    .sort((a, b) => b.f - a.f || a.i - b.i);
  for (const { i } of byFraction) {
    if (left <= 0) break;
    shares[i]! += 1;
    left -= 1;
  }
  return shares;
}

const largest = (goals: Goals) => Math.max(0, ...RECORD_KINDS.map((k) => goals[k] ?? 0));

/** Samples the first round plans per source. */
export function firstRoundSizes(config: TargetsSettings): number[] {
  const expectedYield = config.targets!.expectedYield;
  return clampToBudget(
    sourceGoals(config).map((g) => Math.ceil(largest(g) / expectedYield)),
    config.maxSamples,
    0,
  );
}

/** Records of one kind a source still owes (0 when met or not targeted). */
function deficit(goals: Goals, kept: Pick<SourceTally, RecordKind>, kind: RecordKind): number {
  const goal = goals[kind];
  return goal === undefined ? 0 : Math.max(0, goal - kept[kind]);
}

/**
 * The chance that a top-up round still leaves some source short of a target: a shortfall costs one
 * more round, run alone at the build's end (its length a chain of sequential model calls whatever its
 * size), while planning against it costs the requests of the samples beyond the target. Split evenly
 * over the sources that owe (each source's round is sized to fall short with at most its share).
 */
const SHORTFALL_RISK = 0.05;

/**
 * The next round's samples per source, or why there is none. `round` counts rounds already
 * planned; `tallies` cover the committed shards counted so far, `outstanding` the samples per source
 * planned beyond them and not counted yet (a forecast, taken while the last wave of shards still
 * runs: forecastBasis). Each source gets the fewest samples that, with its outstanding ones, meet
 * its deficit with probability 1 - SHORTFALL_RISK / (sources owing) at the yield measured so far
 * (samplesForRecords: the measurement's own uncertainty included); twice what it planned so far when
 * nothing was accepted. A forecast whose outstanding samples are enough plans nothing ('targets-met').
 */
export function nextRound(
  config: TargetsSettings,
  round: number,
  tallies: readonly SourceTally[],
  outstanding: readonly number[] = [],
): { sizes: number[] } | { outcome: TargetsOutcome } {
  const goals = sourceGoals(config);
  const owing = tallies.map((t, i) => RECORD_KINDS.some((k) => deficit(goals[i]!, t, k) > 0));
  if (!owing.some(Boolean)) return { outcome: 'targets-met' };
  if (owing.every((owes, i) => !owes || tallies[i]!.exhausted)) return { outcome: 'sources-exhausted' };
  if (round >= config.targets!.maxRounds) return { outcome: 'round-limit' };
  const drawing = owing.filter((owes, i) => owes && !tallies[i]!.exhausted).length;
  const confidence = 1 - SHORTFALL_RISK / drawing;
  const wanted = tallies.map((t, i) => {
    if (!owing[i] || t.exhausted) return 0;
    const more = outstanding[i] ?? 0;
    const needs = RECORD_KINDS.map((kind) => {
      const missing = deficit(goals[i]!, t, kind);
      if (missing === 0) return 0;
      if (t[kind] === 0) return Math.max(1, 2 * (t.planned + more));
      // The outstanding samples are draws of the same yield as the new ones: they count among them.
      return Math.max(0, samplesForRecords(missing, t.planned, t[kind], confidence) - more);
    });
    return Math.max(...needs);
  });
  if (wanted.every((n) => n === 0)) return { outcome: 'targets-met' };
  const planned = tallies.reduce((n, t) => n + t.planned, 0) + outstanding.reduce((n, m) => n + m, 0);
  const sizes = clampToBudget(wanted, config.maxSamples, planned);
  return sizes.some((n) => n > 0) ? { sizes } : { outcome: 'sample-limit' };
}

/** Where a plan's rounds start and each shard's source: what start order and the forecast's basis depend on. */
export interface RoundsShape {
  rounds: readonly number[];
  shardSources: readonly number[];
}

/**
 * The shards whose committed tallies the next round is forecast from: every shard of the earlier
 * rounds and the last round's shards in start order (startOrder) but its last `lastWave`, the
 * shards that run at once. Those commit about when the round's last shard starts, so the next round
 * is planned while the last wave runs and its shards take the slots the wave leaves as it drains,
 * instead of starting after it. Undefined when the last round has no more than `lastWave` shards:
 * the next round is then planned from exact counts once everything is committed. A function of the
 * plan and the config alone, never of which shards happen to be done.
 */
export function forecastBasis(plan: RoundsShape, lastWave: number): number[] | undefined {
  const start = plan.rounds[plan.rounds.length - 1] ?? 0;
  const size = plan.shardSources.length - start;
  if (size <= lastWave) return undefined;
  const round = startOrder(
    plan,
    Array.from({ length: size }, (_, i) => start + i),
  );
  const basis = Array.from({ length: start }, (_, shard) => shard);
  basis.push(...round.slice(0, size - lastWave));
  return basis.sort((a, b) => a - b);
}

/** Samples per source planned outside `basis`: what a forecast from the basis has yet to count. */
export function outstandingSamples(plan: RoundsShape & { shardSizes: readonly number[] }, sources: number, basis: readonly number[]): number[] {
  const rest = Array.from({ length: sources }, () => 0);
  const inBasis = new Set(basis);
  for (let shard = 0; shard < plan.shardSources.length; shard++) if (!inBasis.has(shard)) rest[plan.shardSources[shard]!]! += plan.shardSizes[shard]!;
  return rest;
}

/**
 * The order a round's shards start in: each source's shards in rank order, the sources side by side
 * in proportion to their shard counts (a plan lists a round's shards source after source), each
 * shard keyed by the start of its share of the round, so each source's first shard leads.
 */
export function startOrder(plan: RoundsShape, shards: readonly number[]): number[] {
  const key = new Map<number, number>();
  for (const [r, start] of plan.rounds.entries()) {
    const end = plan.rounds[r + 1] ?? plan.shardSources.length;
    for (const ofSource of roundBySource(plan, start, end).values()) ofSource.forEach((shard, i) => key.set(shard, r + i / ofSource.length));
  }
  return [...shards].sort((a, b) => key.get(a)! - key.get(b)! || a - b);
}

/** The shards of [start, end) by source, each in plan (= rank) order. */
function roundBySource(plan: RoundsShape, start: number, end: number): Map<number, number[]> {
  const bySource = new Map<number, number[]>();
  for (let shard = start; shard < end; shard++) {
    const source = plan.shardSources[shard]!;
    const ofSource = bySource.get(source);
    if (ofSource) ofSource.push(shard);
    else bySource.set(source, [shard]);
  }
  return bySource;
}

/** Cuts sizes (in source order) so that the samples planned over all rounds stay within maxSamples. */
function clampToBudget(sizes: number[], maxSamples: number, alreadyPlanned: number): number[] {
  let left = Math.max(0, maxSamples - alreadyPlanned);
  return sizes.map((n) => {
    const take = Math.min(n, left);
    left -= take;
    return take;
  });
}

/** How many accepted records of each kind a shard of a source may keep: what the source still owes. */
export function commitCaps(goals: Goals, kept: Pick<SourceTally, RecordKind>): Goals {
  const caps: Goals = {};
  for (const kind of RECORD_KINDS) if (goals[kind] !== undefined) caps[kind] = deficit(goals, kept, kind);
  return caps;
}
