/**
 * A shard's share of the quality report, as data: the tallies the shard writer takes at commit
 * (output/commit/qualityStats.ts), stored in the manifest and merged by the quality report
 * (output/reports/qualityReport.ts). Types only.
 */
import type { NearMiss } from '../../domain/decontamination.js';

export interface PassCount {
  passed: number;
  total: number;
}

/** Rule verdicts that the direct judge also scored (`judgeAudit`), by outcome. */
export interface AgreementCount {
  /** Rule verdicts with a judge score asked for. */
  audited: number;
  bothPassed: number;
  bothFailed: number;
  /** The risk a judge-only check carries: it lets through what the rule refuses. */
  judgePassedRuleFailed: number;
  judgeFailedRulePassed: number;
  /** The judge gave no score, or its reply was unusable. */
  unscored: number;
}

export interface ShardQuality {
  /** Per constraint type: verdicts on every sample's first answer, and on the answer it ended with. */
  passRates: Record<string, { firstAnswer: PassCount; finalAnswer: PassCount }>;
  /** Per constraint type, over every verified answer (chosen, regenerated and rejected ones). */
  judgeAgreement: Record<string, AgreementCount>;
  /**
   * Per constraint type, the final answers' rule verdicts that were vacuous (domain/verdict.ts): how
   * many, and how many of those the reference would pass. Absent in manifests made before the flag.
   */
  vacuous?: Record<string, VacuousCount>;
  /**
   * With `quality.visionDependence`: samples checked and those answered as well without their image,
   * per source and per task type (the instruction kind the constraint stage saw).
   */
  visionDependence?: { bySource: Record<string, VisionTally>; byTaskType: Record<string, VisionTally> };
  /** Multiturn shards: per question turn (1-based, as a string key), the kept answers of the chats. */
  turns?: Record<string, TurnTally>;
  /** Per DPO strategy, then per constraint type at stake: how often the rejected answer failed it. */
  atStakeFailures: Record<string, Record<string, { failed: number; total: number }>>;
  /**
   * With `decontaminate`: training images that came close to an evaluation image without being
   * confirmed the same picture (domain/decontamination.ts), by the image's sha256: kept, listed.
   */
  nearMisses?: NearMissEntry[];
  /** Word counts (whitespace-separated) of accepted SFT answers and of the kept pairs' answers. */
  lengths: { answerWords: number[]; chosenWords: number[]; rejectedWords: number[] };
  /** What the accepted records hold: records per source, constraints per type (SFT records). */
  composition: {
    bySource: Record<string, { instruct: number; dpo: number; rejectedSamples: number; rejectedPairs: number }>;
    constraintTypes: Record<string, number>;
    constraintsPerRecord: number[];
  };
}

export interface NearMissEntry extends NearMiss {
  /** The training image's sha256 (its file under `images/`). */
  image: string;
}

export interface VisionTally {
  checked: number;
  independent: number;
}

/** A multiturn shard's kept answers at one question turn, over its chats (seed 002's PIF of the data). */
export interface TurnTally {
  /** Chats reaching the turn (one kept answer each). */
  answers: number;
  /** Sum of the kept answers' PIF (credited verdicts: verification.vacuous). */
  pifSum: number;
  /** Kept answers with PIF = 1 (every instruction in force followed): PIF-1-1's successes. */
  followsAll: number;
  /** Answers generated, kept ones included. */
  attempts: number;
  /** Instructions in force, summed over the chats. */
  inForce: number;
  /** Turn-level pairs kept at this turn, and the sum of their rejected answers' PIF. */
  pairs: number;
  rejectedPifSum: number;
}

export interface VacuousCount {
  /** Rule verdicts on final answers. */
  rule: number;
  vacuous: number;
  /** Vacuous verdicts the reference passes (not credited under `verification.vacuous: "fail"`). */
  vacuousPasses: number;
}
