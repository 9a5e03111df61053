/** The DPO pair rules (pipeline/stages/rejected/pairRules.ts) over hand-made verdicts. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chosenLosses, judgePair, rejectedVerificationIndices } from '../../pipeline/stages/rejected/pairRules.js';
import type { Verdict } from '../../domain/verdict.js';

const v = (index: number, passed: boolean, method: Verdict['method'] = 'rule'): Verdict => ({ index, type: `t${index}`, method, passed, detail: passed ? 'ok' : 'no' });

test('a pair is kept when the rejected answer fails a constraint at stake and the chosen answer loses nowhere', () => {
  assert.deepEqual(judgePair([v(0, true), v(1, true), v(2, false)], [v(0, false), v(1, true), v(2, false)], [0], 'pass'), { kept: true });
});

test('a rejected answer that meets every constraint at stake makes the pair uninformative', () => {
  const judgement = judgePair([v(0, true), v(1, true)], [v(0, true), v(1, false)], [0], 'pass');
  assert.equal(judgement.kept, false);
  assert.equal(!judgement.kept && judgement.rule, 'uninformative-pair', 'a failure outside the stake does not count');
});

test('the chosen answer failing "exactly 3 paragraphs" where the rejected answer passes it refuses the pair (cc3m-8f46e7ae07f04fc0)', () => {
  const chosen = [v(0, true), { ...v(1, false), type: 'paragraph_number_limit', detail: 'check_whether_response_paragraph_number_in_range(3, 3) = false' }];
  const rejected = [v(0, false), { ...v(1, true), type: 'paragraph_number_limit' }];
  const judgement = judgePair(chosen, rejected, [0], 'pass');
  assert.equal(judgement.kept, false);
  assert.ok(!judgement.kept);
  assert.equal(judgement.rule, 'chosen-loses');
  assert.match(judgement.detail, /#2 paragraph_number_limit \(chosen rule: check_whether_response_paragraph_number_in_range\(3, 3\) = false\)/);
});

test('the comparison covers judged constraints too, and only constraints both answers were verified on', () => {
  assert.deepEqual(
    chosenLosses([v(0, false, 'direct_judge'), v(1, false), v(2, false)], [v(0, true, 'direct_judge'), v(1, false)], 'pass').map((l) => l.index),
    [0],
  );
  // Like with like: the chosen answer's compare-judge verdict is not set against the rejected answer's direct-judge one.
  assert.deepEqual(chosenLosses([v(0, false, 'compare_judge')], [v(0, true, 'direct_judge')], 'pass'), []);
  // Both failing, or the rejected answer unverified on it, is no loss.
  assert.deepEqual(judgePair([v(0, true), v(1, false), v(2, false)], [v(0, false), v(1, false)], [0], 'pass'), { kept: true });
});

test('uninformative-pair is checked first when both rules refuse a pair', () => {
  const judgement = judgePair([v(0, true), v(1, false)], [v(0, true), v(1, true)], [0], 'pass');
  assert.ok(!judgement.kept);
  assert.equal(judgement.rule, 'uninformative-pair');
});

test('the rejected answer is verified on the constraints at stake and on every rule-checked one', () => {
  const methods = [{ method: 'rule' }, { method: 'direct_judge' }, { method: 'compare_judge' }, { method: 'rule' }];
  assert.deepEqual(rejectedVerificationIndices(methods, [1]), [0, 1, 3]);
  assert.deepEqual(rejectedVerificationIndices(methods, []), [0, 3]);
});

test('vacuous passes count for neither side under "fail"; under "pass" they are the reference passes', () => {
  const vacuousPass = (index: number): Verdict => ({ ...v(index, true), vacuous: true, detail: 'check_number_precision_in_response(2) = true (vacuous)' });
  // The rejected answer dodged the constraint at stake (no number at all): it did not fail it.
  assert.deepEqual(judgePair([v(0, true)], [vacuousPass(0)], [0], 'fail'), {
    kept: false,
    rule: 'uninformative-pair',
    detail: 'the rejected answer satisfied every constraint at stake',
  });
  // The chosen answer dodged a constraint the rejected answer passed: the pair would reward dodging.
  const dodged = judgePair([v(0, true), vacuousPass(1)], [v(0, false), v(1, true)], [0], 'fail');
  assert.equal(!dodged.kept && dodged.rule, 'chosen-loses');
  assert.match(!dodged.kept ? dodged.detail : '', /#2 t1 \(chosen rule: .*\(vacuous\)\)/);
  assert.equal(judgePair([v(0, true), vacuousPass(1)], [v(0, false), vacuousPass(1)], [0], 'fail').kept, false, 'both dodged: the chosen answer is not credited either');
  assert.deepEqual(judgePair([v(0, true), vacuousPass(1)], [v(0, false), v(1, true)], [0], 'pass'), { kept: true });
});
