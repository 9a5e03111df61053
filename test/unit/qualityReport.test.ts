import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ADVICE_THRESHOLDS, judgeAgreement, mergeQuality } from '../../output/reports/qualityReport.js';
import { emptyAgreement } from '../../output/commit/qualityStats.js';
import type { ShardQuality } from '../../output/contracts/quality.js';
import { sizeCategory } from '../../output/reports/datasetCard.js';

const counts = (bothPassed: number, bothFailed: number, judgePassedRuleFailed: number, judgeFailedRulePassed: number, unscored = 0) => ({
  audited: bothPassed + bothFailed + judgePassedRuleFailed + judgeFailedRulePassed + unscored,
  bothPassed,
  bothFailed,
  judgePassedRuleFailed,
  judgeFailedRulePassed,
  unscored,
});

test('judge-vs-rule agreement: agreement, Cohen kappa and the false-pass rate over scored verdicts', () => {
  const a = judgeAgreement(counts(40, 15, 5, 0, 3));
  assert.equal(a.agreement, 55 / 60);
  assert.equal(a.judgePassesRuleFailsRate, 5 / 20);
  // p_o = 55/60; judge passes 45/60, rule passes 40/60: p_e = 0.75*0.6667 + 0.25*0.3333.
  const pe = (45 / 60) * (40 / 60) + (15 / 60) * (20 / 60);
  assert.ok(Math.abs(a.kappa! - (55 / 60 - pe) / (1 - pe)) < 1e-12);
  assert.equal(a.advice, 'second-judge');
  assert.equal(judgeAgreement(counts(30, 0, 0, 0)).kappa, null, 'one class only: kappa undefined');
  assert.equal(judgeAgreement(emptyAgreement()).agreement, null);
});

test('advice per type follows the false-pass thresholds, and needs enough rule failures', () => {
  const { minRuleFailures: n } = ADVICE_THRESHOLDS;
  assert.equal(judgeAgreement(counts(10, n, 0, 0)).advice, 'keep-judge');
  assert.equal(judgeAgreement(counts(10, n - 1, 1, 0)).advice, 'keep-judge'); // 1/n = 0.1
  assert.equal(judgeAgreement(counts(10, 7, 3, 0)).advice, 'second-judge'); // 0.3
  assert.equal(judgeAgreement(counts(10, 6, 4, 0)).advice, 'require-rule');
  assert.equal(judgeAgreement(counts(100, n - 2, 1, 0)).advice, 'too-few-samples');
});

test('shard stats add up: counts summed, length lists concatenated', () => {
  const shard = (words: number[], passed: number): ShardQuality => ({
    passRates: { mention: { firstAnswer: { passed, total: 2 }, finalAnswer: { passed: 2, total: 2 } } },
    judgeAgreement: { mention: counts(1, 1, 0, 0) },
    atStakeFailures: { drop33: { mention: { failed: 1, total: 1 } } },
    lengths: { answerWords: words, chosenWords: [], rejectedWords: [] },
    composition: { bySource: { cc3m: { instruct: 1, dpo: 1, rejectedSamples: 0, rejectedPairs: 1 } }, constraintTypes: { mention: 2 }, constraintsPerRecord: [3] },
  });
  const merged = mergeQuality([shard([10, 20], 1), shard([30], 0)]);
  assert.deepEqual(merged.passRates.mention, { firstAnswer: { passed: 1, total: 4 }, finalAnswer: { passed: 4, total: 4 } });
  assert.deepEqual(merged.judgeAgreement.mention, counts(2, 2, 0, 0));
  assert.deepEqual(merged.atStakeFailures.drop33!.mention, { failed: 2, total: 2 });
  assert.deepEqual(merged.lengths.answerWords, [10, 20, 30]);
  assert.deepEqual(merged.composition.bySource.cc3m, { instruct: 2, dpo: 2, rejectedSamples: 0, rejectedPairs: 2 });
});

test('size categories follow the Hub names', () => {
  assert.equal(sizeCategory(0), 'n<1K');
  assert.equal(sizeCategory(999), 'n<1K');
  assert.equal(sizeCategory(1000), '1K<n<10K');
  assert.equal(sizeCategory(23000), '10K<n<100K');
});

test("shard stats read each sample's first and final answer, the rejected answer at stake, and the judge audits", async () => {
  const { shardQuality } = await import('../../output/commit/qualityStats.js');
  type States = Parameters<typeof shardQuality>[0][number];
  const v = (index: number, type: string, passed: boolean, judge?: boolean | null) => ({
    index,
    type,
    method: 'rule' as const,
    passed,
    detail: '',
    ...(judge === undefined ? {} : { judgeAudit: { passed: judge, judgeModel: 'j', detail: '' } }),
  });
  const regenerated = {
    answer: {
      status: 'ok',
      stage: 'answer',
      calls: [],
      result: { prompt: '', answer: 'a', model: 'm', passRate: 1, attempts: 2, verdicts: [v(0, 'mention', true, true)], firstVerdicts: [v(0, 'mention', false, true)] },
    },
    rejected: {
      status: 'ok',
      stage: 'rejected',
      calls: [],
      result: {
        strategy: 'drop33',
        atStake: [0],
        verdicts: [v(0, 'mention', false, null)],
        kept: [],
        dropped: [],
        prompt: '',
        answer: 'r',
        model: 'm',
        passRate: 0,
        attempts: 1,
        validation: 'strict',
        ruleRejections: {},
      },
    },
  } as unknown as States;
  const belowThreshold = {
    answer: { status: 'rejected', stage: 'answer', calls: [], reason: 'answer: below-threshold: ...', details: { verdicts: [v(0, 'mention', false)] } },
  } as unknown as States;
  const q = shardQuality([regenerated, belowThreshold], { instruct: [], dpo: [], rejects: [] });
  assert.deepEqual(q.passRates.mention, { firstAnswer: { passed: 0, total: 2 }, finalAnswer: { passed: 1, total: 2 } });
  // First answer: judge passed what the rule failed; final: both passed; rejected answer: unscored.
  assert.deepEqual(q.judgeAgreement.mention, { audited: 3, bothPassed: 1, bothFailed: 0, judgePassedRuleFailed: 1, judgeFailedRulePassed: 0, unscored: 1 });
  assert.deepEqual(q.atStakeFailures, { drop33: { mention: { failed: 1, total: 1 } } });
});

test("vacuous rates: final answers' rule verdicts per type, summed over shards, old manifests without the field still add up", async () => {
  const { shardQuality } = await import('../../output/commit/qualityStats.js');
  type States = Parameters<typeof shardQuality>[0][number];
  const v = (index: number, type: string, passed: boolean, vacuous: boolean) => ({ index, type, method: 'rule' as const, passed, vacuous, detail: '' });
  const states = (verdicts: unknown[]) =>
    ({ answer: { status: 'ok', stage: 'answer', calls: [], result: { prompt: '', answer: 'a', model: 'm', passRate: 1, attempts: 1, verdicts } } }) as unknown as States;
  const judged = { index: 2, type: 'tone_requirement', method: 'direct_judge', passed: true, detail: '' };
  const q = shardQuality([states([v(0, 'precision', true, true), v(1, 'mention', true, false), judged]), states([v(0, 'precision', true, false)])], {
    instruct: [],
    dpo: [],
    rejects: [],
  });
  assert.deepEqual(q.vacuous, { precision: { rule: 2, vacuous: 1, vacuousPasses: 1 }, mention: { rule: 1, vacuous: 0, vacuousPasses: 0 } });
  const { vacuous: _old, ...before } = q;
  const merged = mergeQuality([q, before, q]);
  assert.deepEqual(merged.vacuous!.precision, { rule: 4, vacuous: 2, vacuousPasses: 2 });
});
