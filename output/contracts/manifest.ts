/**
 * The shard manifest, as data: written last by the shard writer (output/commit/shardWriter.ts), it is
 * the commit marker and the shard's table of contents, and what the build report, the build's
 * progress and the viewer read back. Types only, beside the format tag every manifest carries.
 */
import type { ShardQuality } from './quality.js';

export const MANIFEST_FORMAT = 'mmif-engine/shard-manifest@1';

export interface StageUsage {
  requests: number;
  /** Requests answered from the cache (made and paid before). */
  cachedRequests: number;
  /** Requests whose reply came through the Batch API. */
  batchRequests: number;
  promptTokens: number;
  completionTokens: number;
  /** Of promptTokens, those the provider served from its prompt cache (billed at its cached-input price). */
  cachedPromptTokens: number;
  /** Of completionTokens, those spent reasoning (billed as output, never part of a reply). */
  reasoningTokens: number;
  /**
   * USD paid by this build (llm/pricing.ts: the provider's own figure, the config's price or the
   * price table; batch discount applied; cache hits are free). Unpriced requests add nothing here:
   * they are counted in `unpricedRequests` and by model in `unpriced`, never as $0.
   */
  costUsd: number;
  /** What the cache hits cost when they were first made: money not spent again. */
  savedUsd: number;
  /** Requests paid now whose cost is the provider's own figure (OpenRouter's usage.cost). */
  providerCostRequests: number;
  /** Requests paid now of a model no price is known for. */
  unpricedRequests: number;
  /** Requests paid now whose endpoint reported unusable token counts: counted with the engine's estimate instead (llm/usage.ts). */
  estimatedRequests: number;
}

/** The tokens of the requests of models no price is known for, by model (paid requests only). */
export type UnpricedUsage = Record<string, { requests: number; promptTokens: number; completionTokens: number }>;

export interface ManifestFile {
  /** Relative to the dataset root. */
  path: string;
  sha256: string;
  bytes: number;
  rows: number;
}

export interface ShardManifest {
  format: typeof MANIFEST_FORMAT;
  buildId: string;
  shard: number;
  configFingerprint: string;
  /** True when any model reply came from the mmif simulator: such data is for testing only. */
  simulated: boolean;
  counts: { planned: number; instruct: number; dpo: number; rejectedSamples: number; rejectedPairs: number };
  rejectsByStage: Record<string, number>;
  /** By reason code, e.g. "too-small", "below-threshold", "uninformative-pair". */
  rejectsByReason: Record<string, number>;
  /**
   * The rejected samples alone (no pairs) by reason code: with `counts.instruct`, every planned
   * sample once (the build report's accounting).
   */
  rejectedSamplesByReason: Record<string, number>;
  files: ManifestFile[];
  models: Record<string, string>;
  usage: Record<string, StageUsage>;
  /** Paid requests of models no price is known for, by model; absent when every model was priced. */
  unpriced?: UnpricedUsage;
  verification: VerificationStats;
  pairs: PairStats;
  /** Richness of the shard's planned images (sources[].richness), in plan order: for score distributions. */
  richness?: { scorer: string; scores: number[]; tags: number[] };
  /** The shard's share of the quality report (qualityStats.ts). */
  quality: ShardQuality;
  /** With targets: the records of each kind this shard could keep; accepted ones beyond are `over-target` rejects. */
  targetCaps?: Partial<Record<'instruct' | 'dpo', number>>;
  /**
   * Rejections (samples and pairs) caused by a model call: `model_call` in their reject records. Not
   * final: a re-run of the build regenerates them (llm.rerunModelCallRejects).
   */
  modelCallRejects: number;
  /** 1 for the first commit; each re-commit of a re-opened shard adds one. */
  revision: number;
  /**
   * Set, to the revision being written, on the standing manifest before a re-commit rewrites the
   * data files: a crash mid-rewrite leaves this mark, and the next run re-opens the shard whatever
   * the config says, so the files and the manifest agree again.
   */
  revising?: number;
  /**
   * With the build's `holdout`: accepted records kept out of the training data because their image
   * is held out; the SFT ones are in `heldout/shard-N.jsonl` (listed in `files`). `counts` are the
   * training data only.
   */
  heldOut?: { instruct: number; dpo: number };
}

export interface Tally {
  kept: number;
  discarded: number;
}

/** Pair acceptance of one DPO strategy, and what each pair rule (pipeline/stages/rejected/pairRules.ts) removed. */
export interface StrategyPairs extends Tally {
  /** Discarded pairs by reason code: a pair rule ("uninformative-pair", "chosen-loses") or a model-call failure. */
  discardedByReason: Record<string, number>;
  /** Rejected answers refused by each pair rule, in kept and discarded pairs (each refusal cost a regeneration). */
  refusedAnswersByRule: Record<string, number>;
}

/** DPO pair acceptance by strategy and by the constraint types at stake. */
export interface PairStats {
  byStrategy: Record<string, StrategyPairs>;
  /** Per constraint type, over the pairs where it was at stake (dropped, or all under no_image). */
  byConstraintType: Record<string, Tally>;
}

export interface VerificationStats {
  /** Verdicts on accepted answers, by method. */
  byMethod: Record<string, { passed: number; total: number }>;
  /** Accepted answers that needed a regeneration. */
  regeneratedAnswers: number;
}
