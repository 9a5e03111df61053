/**
 * The quality report of a build (`quality.json` at the dataset root, and a section of the dataset
 * card): the shards' quality stats (qualityStats.ts) added up over every committed manifest, with
 * the rates, agreement figures and distributions derived from them.
 */
import type { BuildConfig } from '../../config/buildConfig.js';
import { constraintType } from '../../domain/constraints/catalogue.js';
import { addCounts } from '../../domain/counts.js';
import { mapLimit } from '../../domain/mapLimit.js';
import { distribution } from '../../domain/richness.js';
import { getJson, putIfChanged, type ObjectStore } from '../../storage/objectStore.js';
import type { BuildReport } from '../contracts/buildReport.js';
import type { BuildLayout } from '../../storage/buildLayout.js';
import type { ShardManifest, StrategyPairs } from '../contracts/manifest.js';
import { emptyAgreement } from '../commit/qualityStats.js';
import type { AgreementCount, NearMissEntry, PassCount, ShardQuality, TurnTally, VacuousCount, VisionTally } from '../contracts/quality.js';

const QUALITY_FORMAT = 'mmif-engine/quality@1';

/**
 * What the judge-vs-rule sample suggests for constraints of a type when no rule is available:
 * trust the judge, add a second judge, or keep only constraints a rule can check. Thresholds are on
 * the judge's false-pass rate (rule-failed verdicts the judge passed), the error that lets answers
 * through the post-filter.
 */
type JudgeAdvice = 'keep-judge' | 'second-judge' | 'require-rule' | 'too-few-samples';
export const ADVICE_THRESHOLDS = { minRuleFailures: 10, keepJudgeAtMost: 0.1, secondJudgeAtMost: 0.3 } as const;

type Distribution = ReturnType<typeof distribution>;
type Rate = PassCount & { rate: number | null };

interface JudgeAgreement extends AgreementCount {
  /** Share of scored verdicts where judge and rule agree. */
  agreement: number | null;
  /** Cohen's kappa of judge vs rule over the scored verdicts (agreement beyond chance). */
  kappa: number | null;
  /** Of the scored verdicts the rule failed, the share the judge passed. */
  judgePassesRuleFailsRate: number | null;
  advice: JudgeAdvice;
}

export interface QualityReport {
  format: typeof QUALITY_FORMAT;
  buildId: string;
  configFingerprint: string;
  simulated: boolean;
  /** Shards the figures cover: committed shards whose manifest carries quality stats. */
  coverage: { committedShards: number; shardsWithStats: number };
  settings: { passThreshold: number | null; maxRegenerations: number | null; judgeAgreementSample: number | null; vacuous: string | null };
  /** Per constraint type (with its Table 5 category and WildIFEval class): first answer vs final answer. */
  passRates: Record<string, { category: string; wildIfEval: string; firstAnswer: Rate; finalAnswer: Rate }>;
  judgeAgreement: { byType: Record<string, JudgeAgreement>; total: JudgeAgreement; thresholds: typeof ADVICE_THRESHOLDS };
  /** Per constraint type, the final answers' rule verdicts that were vacuous, and the share. */
  vacuous: { byType: Record<string, VacuousCount & { rate: number | null }>; total: VacuousCount & { rate: number | null } };
  dpo: {
    /** Kept pairs by strategy, as shares of all kept pairs, and each strategy's acceptance. */
    strategyMix: Record<string, { kept: number; discarded: number; share: number | null; keptRate: number | null; discardedByReason: Record<string, number> }>;
    /** Per strategy and constraint type at stake: how often the rejected answer failed it. */
    atStakeFailureRates: Record<string, Record<string, { failed: number; total: number; rate: number | null }>>;
  };
  rejections: { byStage: Record<string, number>; byReason: Record<string, number> };
  /** Training images close to an evaluation image but not the same picture: kept, listed (empty without `decontaminate`). */
  nearMisses: NearMissEntry[];
  lengths: { answerWords: LengthStats; chosenWords: LengthStats; rejectedWords: LengthStats };
  composition: {
    bySource: Record<string, { instruct: number; dpo: number; rejectedSamples: number; rejectedPairs: number }>;
    constraintTypes: Record<string, number>;
    categories: Record<string, number>;
    wildIfEvalClasses: Record<string, number>;
    constraintsPerRecord: Distribution;
  };
  /**
   * Multiturn builds: per question turn, the kept answers' mean PIF (seed 002 eq. 3), PIF-1-1 (the
   * share whose PIF is 1: one kept answer per turn, so N = 1), answers generated per kept one,
   * instructions in force, and the kept turn-level pairs with their rejected answers' mean PIF; and
   * the corpus figures over every turn. Null for single-turn builds.
   */
  multiturn: { turns: TurnQuality[]; corpus: { turns: number; pif: number | null; pif_1_1: number | null } } | null;
  /**
   * With `quality.visionDependence`: samples checked and those answered as well without their image
   * (vision-independent), with the share, per source and per task type; null when not checked.
   */
  visionDependence: { bySource: Record<string, VisionRate>; byTaskType: Record<string, VisionRate>; total: VisionRate } | null;
  /** Sources selected by image richness: scorer, rule, candidates by fate, score and tag distributions (the build report's). */
  richness: BuildReport['richness'] | null;
}

type VisionRate = VisionTally & { independentRate: number | null };

interface TurnQuality {
  turn: number;
  chats: number;
  pif: number | null;
  pif_1_1: number | null;
  attemptsPerAnswer: number | null;
  instructionsInForce: number | null;
  pairs: number;
  rejectedPif: number | null;
}

export interface LengthStats {
  summary: Distribution;
  /** Counts by word-count bucket: `lo-hi` inclusive, the last open-ended. */
  histogram: Record<string, number>;
}

const LENGTH_BUCKETS = [0, 25, 50, 100, 150, 200, 300, 400, 600, 800, 1200];

export async function writeQualityReport(store: ObjectStore, layout: BuildLayout, report: BuildReport, shardCount: number, config?: BuildConfig): Promise<QualityReport> {
  const manifests = await mapLimit(
    Array.from({ length: shardCount }, (_, shard) => shard),
    32,
    (shard) => getJson<ShardManifest>(store, layout.manifest(shard)),
  );
  const quality = qualityReport(
    report,
    manifests.filter((m): m is ShardManifest => m !== undefined),
    config?.verification,
  );
  await putIfChanged(store, layout.quality, JSON.stringify(quality, null, 2), 'application/json');
  return quality;
}

export function qualityReport(
  report: BuildReport,
  manifests: readonly ShardManifest[],
  verification?: { passThreshold: number; maxRegenerations: number; judgeAgreementSample?: number; vacuous?: string },
): QualityReport {
  const stats = manifests.map((m) => m.quality);
  const sum = mergeQuality(stats);
  const byReason: Record<string, number> = {};
  for (const m of manifests) addCounts(byReason, m.rejectsByReason);
  const categories: Record<string, number> = {};
  const wildIfEvalClasses: Record<string, number> = {};
  for (const [type, n] of Object.entries(sum.composition.constraintTypes)) {
    addCounts(categories, { [constraintType(type)?.category ?? 'unknown']: n });
    addCounts(wildIfEvalClasses, { [constraintType(type)?.wildIfEval ?? 'unknown']: n });
  }
  const agreementByType = Object.fromEntries(
    Object.entries(sum.judgeAgreement)
      .sort()
      .map(([type, a]) => [type, judgeAgreement(a)]),
  );
  const total = emptyAgreement();
  for (const a of Object.values(sum.judgeAgreement)) addFields(total, a);
  return {
    format: QUALITY_FORMAT,
    buildId: report.buildId,
    configFingerprint: report.configFingerprint,
    simulated: report.simulated,
    coverage: { committedShards: manifests.length, shardsWithStats: stats.length },
    settings: {
      passThreshold: verification?.passThreshold ?? null,
      maxRegenerations: verification?.maxRegenerations ?? null,
      judgeAgreementSample: verification?.judgeAgreementSample ?? null,
      vacuous: verification?.vacuous ?? null,
    },
    passRates: Object.fromEntries(
      Object.entries(sum.passRates)
        .sort()
        .map(([type, p]) => [
          type,
          {
            category: constraintType(type)?.category ?? 'unknown',
            wildIfEval: constraintType(type)?.wildIfEval ?? 'unknown',
            firstAnswer: rate(p.firstAnswer),
            finalAnswer: rate(p.finalAnswer),
          },
        ]),
    ),
    judgeAgreement: { byType: agreementByType, total: judgeAgreement(total), thresholds: ADVICE_THRESHOLDS },
    vacuous: vacuousRates(sum.vacuous ?? {}),
    dpo: {
      strategyMix: strategyMix(report.pairs.byStrategy),
      atStakeFailureRates: Object.fromEntries(
        Object.entries(sum.atStakeFailures).map(([strategy, byType]) => [
          strategy,
          Object.fromEntries(
            Object.entries(byType)
              .sort()
              .map(([type, t]) => [type, { ...t, rate: ratio(t.failed, t.total) }]),
          ),
        ]),
      ),
    },
    rejections: { byStage: report.rejectsByStage, byReason },
    nearMisses: [...(sum.nearMisses ?? [])].sort((a, b) => a.worst - b.worst || a.image.localeCompare(b.image)),
    lengths: {
      answerWords: lengthStats(sum.lengths.answerWords),
      chosenWords: lengthStats(sum.lengths.chosenWords),
      rejectedWords: lengthStats(sum.lengths.rejectedWords),
    },
    composition: {
      bySource: sum.composition.bySource,
      constraintTypes: sum.composition.constraintTypes,
      categories,
      wildIfEvalClasses,
      constraintsPerRecord: distribution(sum.composition.constraintsPerRecord),
    },
    multiturn: sum.turns ? multiturnQuality(sum.turns) : null,
    visionDependence: sum.visionDependence ? visionRates(sum.visionDependence) : null,
    richness: report.richness ?? null,
  };
}

function visionRates(v: NonNullable<ShardQuality['visionDependence']>): NonNullable<QualityReport['visionDependence']> {
  const withRate = (t: VisionTally): VisionRate => ({ ...t, independentRate: ratio(t.independent, t.checked) });
  const table = (tallies: Record<string, VisionTally>) =>
    Object.fromEntries(
      Object.entries(tallies)
        .sort()
        .map(([k, t]) => [k, withRate(t)]),
    );
  const total: VisionTally = { checked: 0, independent: 0 };
  for (const t of Object.values(v.bySource)) addFields(total, t);
  return { bySource: table(v.bySource), byTaskType: table(v.byTaskType), total: withRate(total) };
}

function multiturnQuality(turns: Record<string, TurnTally>): NonNullable<QualityReport['multiturn']> {
  const rows = Object.entries(turns)
    .map(([turn, t]) => ({ turn: Number(turn), t }))
    .sort((a, b) => a.turn - b.turn)
    .map(({ turn, t }) => ({
      turn,
      chats: t.answers,
      pif: ratio(t.pifSum, t.answers),
      pif_1_1: ratio(t.followsAll, t.answers),
      attemptsPerAnswer: ratio(t.attempts, t.answers),
      instructionsInForce: ratio(t.inForce, t.answers),
      pairs: t.pairs,
      rejectedPif: ratio(t.rejectedPifSum, t.pairs),
    }));
  const all = Object.values(turns);
  const answers = all.reduce((n, t) => n + t.answers, 0);
  return {
    turns: rows,
    corpus: {
      turns: answers,
      pif: ratio(
        all.reduce((n, t) => n + t.pifSum, 0),
        answers,
      ),
      pif_1_1: ratio(
        all.reduce((n, t) => n + t.followsAll, 0),
        answers,
      ),
    },
  };
}

/** Adds shard stats up (lists are concatenated: distributions are computed over the whole build). */
export function mergeQuality(stats: readonly ShardQuality[]): ShardQuality {
  const into: ShardQuality = {
    passRates: {},
    judgeAgreement: {},
    vacuous: {},
    atStakeFailures: {},
    lengths: { answerWords: [], chosenWords: [], rejectedWords: [] },
    composition: { bySource: {}, constraintTypes: {}, constraintsPerRecord: [] },
  };
  for (const s of stats) {
    for (const [type, p] of Object.entries(s.passRates)) {
      const t = (into.passRates[type] ??= { firstAnswer: { passed: 0, total: 0 }, finalAnswer: { passed: 0, total: 0 } });
      addFields(t.firstAnswer, p.firstAnswer);
      addFields(t.finalAnswer, p.finalAnswer);
    }
    for (const [type, a] of Object.entries(s.judgeAgreement)) addFields((into.judgeAgreement[type] ??= emptyAgreement()), a);
    for (const [type, v] of Object.entries(s.vacuous ?? {})) addFields((into.vacuous![type] ??= { rule: 0, vacuous: 0, vacuousPasses: 0 }), v);
    for (const [key, tallies] of Object.entries(s.visionDependence ?? {}) as Array<['bySource' | 'byTaskType', Record<string, VisionTally>]>) {
      const target = (into.visionDependence ??= { bySource: {}, byTaskType: {} })[key];
      for (const [k, t] of Object.entries(tallies)) addFields((target[k] ??= { checked: 0, independent: 0 }), t);
    }
    for (const [turn, t] of Object.entries(s.turns ?? {})) {
      addFields(((into.turns ??= {})[turn] ??= { answers: 0, pifSum: 0, followsAll: 0, attempts: 0, inForce: 0, pairs: 0, rejectedPifSum: 0 }), t);
    }
    for (const [strategy, byType] of Object.entries(s.atStakeFailures)) {
      const target = (into.atStakeFailures[strategy] ??= {});
      for (const [type, t] of Object.entries(byType)) addFields((target[type] ??= { failed: 0, total: 0 }), t);
    }
    if (s.nearMisses) (into.nearMisses ??= []).push(...s.nearMisses);
    into.lengths.answerWords.push(...s.lengths.answerWords);
    into.lengths.chosenWords.push(...s.lengths.chosenWords);
    into.lengths.rejectedWords.push(...s.lengths.rejectedWords);
    for (const [source, c] of Object.entries(s.composition.bySource)) {
      addFields((into.composition.bySource[source] ??= { instruct: 0, dpo: 0, rejectedSamples: 0, rejectedPairs: 0 }), c);
    }
    addCounts(into.composition.constraintTypes, s.composition.constraintTypes);
    into.composition.constraintsPerRecord.push(...s.composition.constraintsPerRecord);
  }
  return into;
}

function vacuousRates(byType: Record<string, VacuousCount>): QualityReport['vacuous'] {
  const total: VacuousCount = { rule: 0, vacuous: 0, vacuousPasses: 0 };
  for (const v of Object.values(byType)) addFields(total, v);
  const withRate = (v: VacuousCount) => ({ ...v, rate: ratio(v.vacuous, v.rule) });
  return {
    byType: Object.fromEntries(
      Object.entries(byType)
        .sort()
        .map(([type, v]) => [type, withRate(v)]),
    ),
    total: withRate(total),
  };
}

export function judgeAgreement(a: AgreementCount): JudgeAgreement {
  const scored = a.bothPassed + a.bothFailed + a.judgePassedRuleFailed + a.judgeFailedRulePassed;
  const ruleFailed = a.bothFailed + a.judgePassedRuleFailed;
  const falsePass = ratio(a.judgePassedRuleFailed, ruleFailed);
  return {
    ...a,
    agreement: ratio(a.bothPassed + a.bothFailed, scored),
    kappa: cohensKappa(a),
    judgePassesRuleFailsRate: falsePass,
    advice: advise(ruleFailed, falsePass),
  };
}

function advise(ruleFailed: number, falsePass: number | null): JudgeAdvice {
  if (falsePass === null || ruleFailed < ADVICE_THRESHOLDS.minRuleFailures) return 'too-few-samples';
  if (falsePass <= ADVICE_THRESHOLDS.keepJudgeAtMost) return 'keep-judge';
  if (falsePass <= ADVICE_THRESHOLDS.secondJudgeAtMost) return 'second-judge';
  return 'require-rule';
}

/** (observed - expected agreement) / (1 - expected); null when undefined (no verdicts, or one class only). */
function cohensKappa(a: AgreementCount): number | null {
  const n = a.bothPassed + a.bothFailed + a.judgePassedRuleFailed + a.judgeFailedRulePassed;
  if (n === 0) return null;
  const observed = (a.bothPassed + a.bothFailed) / n;
  const judgePass = (a.bothPassed + a.judgePassedRuleFailed) / n;
  const rulePass = (a.bothPassed + a.judgeFailedRulePassed) / n;
  const expected = judgePass * rulePass + (1 - judgePass) * (1 - rulePass);
  return expected === 1 ? null : (observed - expected) / (1 - expected);
}

function strategyMix(byStrategy: Record<string, StrategyPairs>): QualityReport['dpo']['strategyMix'] {
  const kept = Object.values(byStrategy).reduce((n, s) => n + s.kept, 0);
  return Object.fromEntries(
    Object.entries(byStrategy).map(([strategy, s]) => [
      strategy,
      { kept: s.kept, discarded: s.discarded, share: ratio(s.kept, kept), keptRate: ratio(s.kept, s.kept + s.discarded), discardedByReason: s.discardedByReason },
    ]),
  );
}

function lengthStats(values: readonly number[]): LengthStats {
  const histogram: Record<string, number> = {};
  for (const [i, lo] of LENGTH_BUCKETS.entries()) {
    const hi = LENGTH_BUCKETS[i + 1];
    histogram[hi === undefined ? `${lo}+` : `${lo}-${hi - 1}`] = values.filter((v) => v >= lo && (hi === undefined || v < hi)).length;
  }
  return { summary: distribution(values), histogram };
}

/** Adds every numeric field of `from` into `into` (counts of the same shape). */
function addFields<T extends { [K in keyof T]: number }>(into: T, from: T): void {
  for (const key of Object.keys(into) as Array<keyof T>) (into[key] as number) += from[key] ?? 0;
}

const rate = (p: PassCount): Rate => ({ ...p, rate: ratio(p.passed, p.total) });
const ratio = (n: number, of: number): number | null => (of === 0 ? null : n / of);
