/**
 * Topping up a build with `targets`: the next planning round, which takes the next ranks of each
 * source's seeded order into new shards appended to the plan. Idempotent: a round is planned once; a retried
 * activity or a re-run finds it in the plan summary, which is written last.
 */
import type { BuildConfig } from '../../config/buildConfig.js';
import { addCounts } from '../../domain/counts.js';
import type { SourceSample } from '../../domain/sample.js';
import { forecastBasis, nextRound, outstandingSamples, type SourceTally } from '../../domain/targets.js';
import type { BuildLayout } from '../../storage/buildLayout.js';
import type { SourceReader } from '../../sources/contract.js';
import { getJson, putJson, type ObjectStore } from '../../storage/objectStore.js';
import type { BuildPlan, RankReserve } from './planBuild.types.js';
import { cutShards, rankedSlice } from './ranking.js';
import { takeRichSamples, type RichnessTools } from './richness.js';

/**
 * Plans round `round` (1 = the first top-up) once every shard of the earlier rounds is committed,
 * or records why topping up stops. With `forecast`, plans it once the forecast's basis is committed
 * (domain/targets.ts forecastBasis) while the last wave of shards still runs, counting what those
 * will keep with confidence (nextRound): only a round is ever written then, never an outcome (a
 * forecast that meets the targets plans nothing; the exact call after the last round decides).
 * Returns the plan as it now stands.
 */
export async function makeTopUpPlan(
  config: BuildConfig,
  store: ObjectStore,
  layout: BuildLayout,
  sources: readonly SourceReader[],
  round: number,
  /** What each source's committed shards among `shards` hold (read from their manifests, output/reports/sourceTallies.ts). */
  tallyOf: (plan: BuildPlan, shards: readonly number[]) => Promise<SourceTally[]>,
  richness?: RichnessTools,
  /** Plan from a forecast whose basis leaves out the last round's last `lastWave` shards in start order. */
  forecast?: { lastWave: number },
): Promise<BuildPlan> {
  const plan = await getJson<BuildPlan>(store, layout.planSummary);
  if (!plan) throw new Error(`build '${config.buildId}': no plan in ${store.root} to top up`);
  if (plan.rounds.length > round || plan.targetsOutcome) return plan;

  const basis = forecast ? forecastBasis(plan, forecast.lastWave) : Array.from({ length: plan.shardCount }, (_, shard) => shard);
  if (!basis) return plan; // a round too small to forecast from
  const tallies = await tallyOf(plan, basis);
  const committed = tallies.reduce((n, t) => n + t.planned, 0);
  const planned = basis.reduce((n, shard) => n + plan.shardSizes[shard]!, 0);
  if (committed !== planned) {
    throw new Error(`build '${config.buildId}': round ${round} is planned from committed shards only, but ${planned - committed} planned samples are not committed`);
  }
  const next = nextRound(config, plan.rounds.length, tallies, forecast ? outstandingSamples(plan, plan.sources.length, basis) : []);
  if (forecast && 'outcome' in next) return plan;
  if ('outcome' in next) {
    const done: BuildPlan = { ...plan, targetsOutcome: next.outcome };
    await putJson(store, layout.planSummary, done);
    return done;
  }

  const added: SourceSample[][] = [];
  const addedSources: number[] = [];
  const perSource = plan.sources.map((s) => ({ ...s }));
  for (const [index, size] of next.sizes.entries()) {
    if (size === 0) continue;
    const source = perSource[index]!;
    const rich = config.sources[index]!.richness ? await takeRichSamples(config, index, sources[index]!, source.ranked, size, richness!) : undefined;
    const slice = rich?.samples ?? (await nextRanks(config, store, layout, index, sources[index]!, source.ranked, source.ranked + size));
    for (const shard of cutShards(slice, config.shardSize)) {
      added.push(shard);
      addedSources.push(index);
    }
    source.selected += slice.length;
    source.ranked = rich?.ranked ?? source.ranked + slice.length;
    source.exhausted = rich?.exhausted ?? slice.length < size;
    if (rich) addCounts((source.richness ??= {}), rich.fates);
  }
  for (const [i, samples] of added.entries()) await putJson(store, layout.shardPlan(plan.shardCount + i), samples);
  const grown: BuildPlan = {
    ...plan,
    sampleCount: plan.sampleCount + added.reduce((n, s) => n + s.length, 0),
    shardCount: plan.shardCount + added.length,
    shardSizes: [...plan.shardSizes, ...added.map((s) => s.length)],
    shardSources: [...plan.shardSources, ...addedSources],
    rounds: [...plan.rounds, plan.shardCount],
    sources: perSource,
  };
  await putJson(store, layout.planSummary, grown);
  return grown;
}

/**
 * Ranks [from, to) of source `index`'s seeded order: from the reserve planning ranked ahead when it
 * holds them (the same ranks the source's scan gives), else by scanning the source again (builds
 * planned before the reserve, a round beyond it).
 */
async function nextRanks(config: BuildConfig, store: ObjectStore, layout: BuildLayout, index: number, reader: SourceReader, from: number, to: number): Promise<SourceSample[]> {
  const reserve = await getJson<RankReserve>(store, layout.rankReserve(index));
  const end = reserve ? reserve.from + reserve.samples.length : 0;
  if (reserve && from >= reserve.from && (to <= end || reserve.complete)) return reserve.samples.slice(from - reserve.from, to - reserve.from);
  return rankedSlice(config, reader, from, to);
}
