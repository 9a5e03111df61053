/**
 * A build's plan and its stored config, as data: written by planning (pipeline/planning/planBuild.ts) under
 * the build's root, read by the shard workflow's activities, the build report, the forecast, the
 * exports and the viewer. Types only, so that what reads a plan does not import planning.
 */
import type { BuildConfig } from '../../config/buildConfig.js';
import type { SourceSample } from '../../domain/sample.js';
import type { TargetsOutcome } from '../../domain/targets.js';
import type { PromptMaterial } from '../../prompts/promptFingerprint.js';

export interface BuildPlan {
  configFingerprint: string;
  sampleCount: number;
  shardCount: number;
  /** Samples in each shard; the last shard of each source may be short. */
  shardSizes: number[];
  /** The source (config index) of each shard. */
  shardSources: number[];
  /** First shard of each planning round: [0] without targets; topping up appends rounds. */
  rounds: number[];
  /** With targets: why topping up stopped, once it has. */
  targetsOutcome?: TargetsOutcome;
  /**
   * Per source, in config order: what planning's scan read (every record of every segment the reader
   * yielded: `samples`, `filtered` records by policy and damaged units by `problems` code),
   * samples `selected` over all rounds, ranks of its seeded order consumed (`ranked`: more than
   * selected when richness refused some), and with richness the scored candidates by fate
   * (selected, not-needed, or the rule's reason code). The build report's accounting
   * (output/reports/sourceAccounting.ts) starts from these.
   */
  sources: PlannedSource[];
  /** Damaged source units, listed in rejects/source-problems.jsonl. */
  sourceProblems: number;
  /** Without targets, when a source held fewer samples than its share of maxSamples: what became of the slots it left. */
  freeSlots?: FreeSlots;
}

/**
 * The slots of maxSamples that sources holding fewer samples than their share left (`freed`):
 * planning gives them to the sources without a quota or richness that have records left (each
 * one's PlannedSource.extra), and `unused` are those no such source could take.
 */
export interface FreeSlots {
  freed: number;
  unused: number;
}

export interface PlannedSource {
  type: string;
  /** The source's name in records and reports (config/sourceConfig.ts sourceNames). */
  name: string;
  target: number;
  read: number;
  samples: number;
  filtered: Record<string, number>;
  problems: Record<string, number>;
  selected: number;
  ranked: number;
  exhausted: boolean;
  /** Samples planned beyond `target`: slots other sources left free (BuildPlan.freeSlots). */
  extra?: number;
  richness?: Record<string, number>;
}

/**
 * A source's seeded order beyond round 0, ranked by the same scan that planned it (a targets build,
 * without richness): the top-up rounds take their ranks from it instead of reading the source again
 * (pipeline/planning/topUp.ts), which at paper scale took 55-61 s of a forecast's planning call. As many ranks
 * as round 0 took, so a yield down to half the expected one needs no second scan.
 */
export interface RankReserve {
  /** The rank of samples[0]: the samples round 0 selected. */
  from: number;
  samples: SourceSample[];
  /** The source has no ranks beyond these. */
  complete: boolean;
}

export interface StoredConfig {
  configFingerprint: string;
  config: BuildConfig;
  /** What its stages send, as fingerprinted (prompts/promptFingerprint.ts): names the prompts a refused resume changed. */
  prompts: PromptMaterial;
}
