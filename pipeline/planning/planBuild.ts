/**
 * Plans a build: streams every source, selects each source's share of samples and cuts them into
 * shards of one source each (so a shard's state never mixes sources).
 *
 * Selection ranks each sample by sha256(seed, sampleId) and keeps the lowest ranks of its source.
 * The choice is therefore reproducible, independent of listing order, and stable under growth:
 * raising a quota keeps every earlier pick and only adds new ones. Memory is bounded by the
 * quotas, not by the dataset size. Damaged source units are listed in full; records filtered by
 * policy (multiple choice, dropped task types...) are counted by reason.
 */
import type { BuildConfig } from '../../config/buildConfig.js';
import { sourceNames } from '../../config/sourceConfig.js';
import { canonicalJson, fingerprintMaterial } from '../../config/fingerprint.js';
import { sha256Hex } from '../../domain/hashing.js';
import type { SourceSample } from '../../domain/sample.js';
import type { BuildLayout } from '../../storage/buildLayout.js';
import { firstRoundSizes, sourceShares } from '../../domain/targets.js';
import type { SourceProblem, SourceReader } from '../../sources/contract.js';
import { cutShards, LowestRanks, offerSegment, rankedSlice, sampleRank } from './ranking.js';
import { richnessWindow, takeRichSamples, type RichnessTools } from './richness.js';
import { getJson, putJson, type ObjectStore } from '../../storage/objectStore.js';
import { ConfigMismatchError } from './configMismatchError.js';
import { changedPrompts, promptMaterial, type PromptMaterial } from '../../prompts/promptFingerprint.js';
import type { BuildPlan, FreeSlots, RankReserve, StoredConfig } from './planBuild.types.js';

/** The sha256 of everything that shapes the output: the config's material and what its stages send (prompts/promptFingerprint.ts). */
export function configFingerprint(config: BuildConfig, prompts: PromptMaterial = promptMaterial(config)): string {
  return sha256Hex(`${fingerprintMaterial(config)}\u0000${canonicalJson(prompts)}`);
}

/** The stored config of a build of `config` whose stages send `prompts`. */
export function storedConfigOf(config: BuildConfig, prompts: PromptMaterial = promptMaterial(config)): StoredConfig {
  return { configFingerprint: configFingerprint(config, prompts), config, prompts };
}

/** What differs between the stored build and `config`: its settings, its prompts (named), or both. */
function mismatchCause(stored: StoredConfig, config: BuildConfig): string {
  const prompts = changedPrompts(stored.prompts, promptMaterial(config));
  const settings = prompts.length === 0 || fingerprintMaterial(stored.config) !== fingerprintMaterial(config);
  const changed = prompts.length ? `prompts changed since it was planned (${prompts.join(', ')})` : '';
  return settings ? `a different config${changed && ` and ${changed}`}` : changed;
}

/**
 * The config the build was planned with, if it was; throws ConfigMismatchError when that differs
 * from `config` in anything that changes output bytes (planning, and `mmif validate` / `mmif build`
 * before starting anything, pipeline/planning/buildChecks.ts).
 */
export async function sameStoredConfig(config: BuildConfig, store: ObjectStore, layout: BuildLayout): Promise<StoredConfig | undefined> {
  const fingerprint = configFingerprint(config);
  const stored = await getJson<StoredConfig>(store, layout.config);
  if (stored && stored.configFingerprint !== fingerprint) {
    throw new ConfigMismatchError(
      `build '${config.buildId}' already exists in ${store.root} with ${mismatchCause(stored, config)} (fingerprint ` +
        `${stored.configFingerprint.slice(0, 12)}, now ${fingerprint.slice(0, 12)}); use a new buildId for a new version ('mmif build --new-version' picks one)`,
    );
  }
  return stored;
}

export async function makeBuildPlan(
  config: BuildConfig,
  store: ObjectStore,
  layout: BuildLayout,
  sources: readonly SourceReader[],
  /** For sources with `richness` (pipeline/planning/richness.ts). */
  richness?: RichnessTools,
): Promise<BuildPlan> {
  const fingerprint = configFingerprint(config);
  const stored = await sameStoredConfig(config, store, layout);

  const planned = stored ? await getJson<BuildPlan>(store, layout.planSummary) : undefined;
  if (config.sources.some((s) => s.richness) && !richness) throw new Error('planning a build with richness selection needs its scoring tools');
  if (planned) return planned;

  // With targets, the first round of topping up (pipeline/planning/topUp.ts plans the later ones).
  const targets = config.targets ? firstRoundSizes(config) : sourceShares(config.maxSamples, config.sources);
  const damaged: Array<SourceProblem & { source: string; sourceIndex: number }> = [];
  const filtered: Record<string, Record<string, number>> = {};
  const chosen: SourceSample[][] = [];
  const perSource: BuildPlan['sources'] = [];
  const names = sourceNames(config.sources);
  for (const [index, reader] of sources.entries()) {
    const type = config.sources[index]!.type;
    const name = names[index]!;
    // With richness, the scan ranks the first window of candidates to score.
    const richnessRule = config.sources[index]!.richness;
    // With targets, also the ranks after round 0's, held for the top-up rounds (rankReserve).
    const reserve = config.targets && !richnessRule ? targets[index]! : 0;
    const selection = new LowestRanks<SourceSample>(richnessRule ? richnessWindow(richnessRule, targets[index]!) : targets[index]! + reserve);
    // `read` counts the records, `samples` the segment's ids: the report's identity fails if a source's ids and records disagree.
    let read = 0;
    let samples = 0;
    const problems: Record<string, number> = {};
    const filteredHere: Record<string, number> = {};
    for await (const segment of reader.segments()) {
      read += segment.records.length;
      samples += segment.sampleIds.length;
      for (const record of segment.records) {
        if (typeof record === 'string') continue;
        if (record.kind === 'filtered') {
          filteredHere[record.filter] = (filteredHere[record.filter] ?? 0) + 1;
        } else {
          damaged.push({ ...record, source: name, sourceIndex: index });
          problems[record.code] = (problems[record.code] ?? 0) + 1;
        }
      }
      offerSegment(selection, config.seed, segment);
    }
    if (Object.keys(filteredHere).length > 0) filtered[`${index}:${name}`] = filteredHere;
    const ranked = selection.sorted();
    const rich = richnessRule && targets[index]! > 0 ? await takeRichSamples(config, index, reader, 0, targets[index]!, richness!, ranked) : undefined;
    const selected = rich?.samples ?? (richnessRule ? [] : ranked.slice(0, targets[index]!));
    if (reserve > 0) {
      const held: RankReserve = { from: selected.length, samples: ranked.slice(selected.length), complete: ranked.length < targets[index]! + reserve };
      await putJson(store, layout.rankReserve(index), held);
    }
    chosen.push(selected);
    perSource.push({
      type,
      name,
      target: targets[index]!,
      read,
      samples,
      filtered: filteredHere,
      problems,
      selected: selected.length,
      ranked: rich?.ranked ?? selected.length,
      exhausted: rich?.exhausted ?? selected.length < targets[index]!,
      ...(rich ? { richness: rich.fates } : {}),
    });
  }
  // Without targets, the slots of sources that held fewer samples than their share go to sources with records left.
  const slots = config.targets ? undefined : await fillFreeSlots(config, sources, perSource, chosen);
  const shards: SourceSample[][] = [];
  const shardSources: number[] = [];
  for (const [index, selected] of chosen.entries()) {
    for (const shard of cutShards(selected, config.shardSize)) {
      shards.push(shard);
      shardSources.push(index);
    }
  }
  for (const [shard, samples] of shards.entries()) await putJson(store, layout.shardPlan(shard), samples);
  await store.put(layout.sourceProblems, damaged.map((p) => `${JSON.stringify(p)}\n`).join(''));
  await putJson(store, layout.sourceFiltered, filtered);
  if (!stored) await putJson(store, layout.config, storedConfigOf(config));
  const plan: BuildPlan = {
    configFingerprint: fingerprint,
    sampleCount: shards.reduce((n, s) => n + s.length, 0),
    shardCount: shards.length,
    shardSizes: shards.map((s) => s.length),
    shardSources,
    rounds: [0],
    sources: perSource,
    sourceProblems: damaged.length,
    ...(slots ? { freeSlots: slots } : {}),
  };
  await putJson(store, layout.planSummary, plan);
  return plan;
}

/**
 * maxSamples kept whole when a source holds fewer samples than its share: the slots it leaves go to
 * the sources that may take more (no quota, no richness) and were not exhausted, by the build's
 * seeded order across them (the lowest sampleRank beyond each one's share first), so the plan stays
 * reproducible. Those sources are read again for ranks beyond their share (only when a slot is
 * free). Mutates `perSource` (selected, ranked, exhausted, extra) and `chosen`; returns what became
 * of the slots, or undefined when every source filled its share.
 */
async function fillFreeSlots(config: BuildConfig, sources: readonly SourceReader[], perSource: BuildPlan['sources'], chosen: SourceSample[][]): Promise<FreeSlots | undefined> {
  const freed = perSource.reduce((n, s) => n + Math.max(0, s.target - s.selected), 0);
  if (freed === 0) return undefined;
  const takers = perSource.flatMap((s, i) => (!s.exhausted && config.sources[i]!.quota === undefined && !config.sources[i]!.richness ? [i] : []));
  const beyond = await Promise.all(takers.map((i) => rankedSlice(config, sources[i]!, perSource[i]!.selected, perSource[i]!.selected + freed)));
  const candidates = takers
    .flatMap((i, k) => beyond[k]!.map((sample) => ({ i, sample, rank: sampleRank(config.seed, sample.sampleId) })))
    .sort((a, b) => (a.rank < b.rank ? -1 : a.rank > b.rank ? 1 : 0))
    .slice(0, freed);
  for (const { i, sample } of candidates) {
    chosen[i]!.push(sample);
    const s = perSource[i]!;
    s.selected += 1;
    s.ranked += 1;
    s.extra = (s.extra ?? 0) + 1;
  }
  // A taker that gave every rank it had beyond its share has no records left.
  for (const [k, i] of takers.entries()) if (beyond[k]!.length < freed && beyond[k]!.length === (perSource[i]!.extra ?? 0)) perSource[i]!.exhausted = true;
  return { freed, unused: freed - candidates.length };
}
