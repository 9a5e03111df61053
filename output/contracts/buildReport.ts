/**
 * The build report, as data: what a finished build returns (its workflow's result) and writes as
 * build-report.json, and what the CLI, the dataset card, the forecast and the viewer read. Types
 * only; output/reports/buildReport.ts computes it, with its parts from costSummary.ts,
 * richnessReport.ts and sourceAccounting.ts beside it.
 */
import type { RichnessConfig } from '../../config/sourceFields.js';
import type { distribution } from '../../domain/richness.js';
import type { Goals, TargetsOutcome } from '../../domain/targets.js';
import type { EndpointLessons } from '../../llm/preflight.js';
import type { ReplicaShare } from '../../domain/replicaShares.js';
import type { PairStats, StageUsage, UnpricedUsage, VerificationStats } from './manifest.js';

/** A distribution of scores (domain/richness.ts), null when there were none. */
export type Distribution = ReturnType<typeof distribution>;

export interface BuildReport {
  buildId: string;
  configFingerprint: string;
  /**
   * Where the dataset is, for whoever reads the report: `<output>/<buildId>` in the workflow's result
   * (datasetRootOf); `.` in build-report.json, which lives at the dataset root and is published with
   * it, so it names no folder of the machine that wrote it.
   */
  datasetRoot: string;
  simulated: boolean;
  shards: { planned: number; committed: number; failed: number };
  failedShards: Array<{ shard: number; error: string }>;
  /** Set when the build's hard budget (llm.budget) stopped it: the one line it stopped with. */
  budgetExhausted?: string;
  counts: { planned: number; instruct: number; dpo: number; rejectedSamples: number; rejectedPairs: number };
  rejectsByStage: Record<string, number>;
  /**
   * Of the rejections, those caused by a model call (endpoint refusals, unusable replies after every
   * try): not final, a re-run of the build regenerates them (llm.rerunModelCallRejects).
   */
  modelCallRejects: number;
  usage: Record<string, StageUsage>;
  /** Paid requests of models no price is known for, by model (their tokens are not in any USD figure). */
  unpriced?: UnpricedUsage;
  /** The cost in the figures every report shows (output/reports/costSummary.ts). */
  cost: CostSummary;
  /** What the calls were priced by: the price table's package, version and date, and the models the config prices itself. */
  prices: PricedBy;
  models: Record<string, string>;
  verification: VerificationStats;
  pairs: PairStats;
  /** With targets: whether they were met, or why topping up stopped, and the counts per source. */
  targets?: TargetsReport;
  /** Sources selected by richness: scorer, rule, candidates by fate, score and tag distributions. */
  richness?: SourceRichness[];
  /** Set for multiturn builds: `counts.instruct` are chats and `counts.dpo` turn-level pairs (chat/, chat-dpo/). */
  mode?: 'multiturn';
  /**
   * With the build's `holdout`: the eval split it reserved (accepted records whose image is held out,
   * not in `counts`), drawn by image with `seed`; written to MM-IFEval/mmif_holdout.jsonl.
   */
  heldOut?: { fraction: number; seed: number; instruct: number; dpo: number };
  /**
   * Per source, every record read accounted for (output/reports/sourceAccounting.ts):
   * read = planned + notSelected + filtered + problems, planned = accepted + heldOut + rejected + uncommitted.
   */
  accounting: SourceAccount[];
  /**
   * Without targets, when a source held fewer samples than its share of maxSamples (`short`): the
   * slots it left, the sources that took them (`given`: each one's samples beyond its share, in the
   * seeded order across them) and how many no source could take (`unused`).
   */
  freeSlots?: {
    freed: number;
    unused: number;
    short: Array<{ source: number; type: string; share: number; held: number }>;
    given: Array<{ source: number; type: string; extra: number }>;
  };
  /**
   * Endpoints + models that accept something other than the plain OpenAI request, and what the
   * engine sends them instead, learned from their refusals (llm/dialect.ts); absent when none.
   */
  endpointDialects?: EndpointLessons[];
  /**
   * The replicas of endpoints with several (models.<role>.baseUrls) and how the build's requests went
   * among them: attempts routed to each, its share, those it took as spills or re-routes, and the
   * times it was taken out (domain/replicaShares.ts); absent when no endpoint has several.
   */
  replicas?: ReplicaShare[];
}

export interface TargetsReport {
  /** `targets-met`, `sources-exhausted`, `round-limit` or `sample-limit`; absent while the build is still topping up. */
  outcome: TargetsOutcome | 'in-progress';
  rounds: number;
  sources: Array<{ type: string; name: string; goals: Goals; kept: { instruct: number; dpo: number }; planned: number; exhausted: boolean }>;
}

export interface CostSummary {
  /** USD of the priced calls of this build's committed shards (cache hits are free; unpriced models add nothing). */
  usd: number;
  /**
   * Every request the build paid for, in all its runs, committed or not (a budget-stopped or failed
   * shard's, pre-flight's, a killed attempt's): the spend ledger (llm/spendLedger.ts). `usd` above is
   * the committed share of it. Absent in reports made without the ledger (progress, `mmif estimate`).
   */
  paid?: { usd: number; requests: number };
  /** Simulated build: `usd` is what it would cost at the named models' prices; nothing was spent. */
  forecast: boolean;
  /** USD per accepted SFT record (or chat) and per DPO pair: the whole cost over each; absent with none. */
  perSftRecord?: number;
  perPair?: number;
  /** Of all prompt tokens, the share the provider served from its prompt cache (0..1). */
  cachedPromptShare: number;
  reasoningTokens: number;
  /** USD the model cache saved: what its hits cost when first made. */
  savedUsd: number;
  /** Paid requests whose cost is the provider's own figure. */
  providerCostRequests: number;
  /** Paid requests of models no price is known for, by model. */
  unpriced: UnpricedUsage;
}

/** What a build's calls were priced by: the price table's package, version and date, and the models the config prices itself. */
export interface PricedBy {
  table: string;
  version: string;
  published: string;
  configured: string[];
}

export interface SourceRichness {
  source: number;
  type: string;
  name: string;
  settings: RichnessConfig;
  /** Scored candidates by fate: selected, not-needed, below-min-score, below-top-fraction, unscorable... */
  fates: Record<string, number>;
  scores: { scored: Distribution; selected: Distribution };
  tags: { scored: Distribution; selected: Distribution };
}

export interface SourceAccount {
  /** Index of the source in the config, and its type. */
  source: number;
  type: string;
  /** Its name in records (`source`): config/sourceConfig.ts sourceNames. */
  name: string;
  /** Items the reader yielded while planning: samples, filtered records and damaged units. */
  read: number;
  /** Samples the plan selected, over every round. */
  planned: number;
  /** Samples read but not selected: `not-drawn`, and `richness:<fate>` for scored candidates left out. */
  notSelected: Record<string, number>;
  /** Records dropped by policy, by filter (as in rejects/source-filtered.json). */
  filtered: Record<string, number>;
  /** Damaged units, by code (listed one by one in rejects/source-problems.jsonl). */
  problems: Record<string, number>;
  /** Planned samples of committed shards that became an MM-IFInstruct training record. */
  accepted: number;
  /** Accepted samples whose image the build's `holdout` reserved: their SFT records are the eval split (heldout/). */
  heldOut: number;
  /** Planned samples of committed shards rejected, by reason code (listed in rejects/shard-*.jsonl). */
  rejected: Record<string, number>;
  /** Planned samples in shards not committed (failed or cancelled): 0 when the build completed. */
  uncommitted: number;
  /** Whether both identities hold. */
  balanced: boolean;
}
