/**
 * The judge-vs-rule sample (`verification.judgeAgreementSample`), against the real simulator over
 * HTTP: sampled rule-checked constraints get the direct judge's score beside the rule verdict, in a
 * call of their own, and nothing used for filtering changes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PlannedConstraint } from '../../pipeline/run/stageState.js';
import { rule } from '../harness/plannedConstraints.js';
import { verifyAnswer } from '../../pipeline/stages/answer/verifyAnswer.js';
import { runRejectedStage } from '../../pipeline/stages/rejected/rejectedStage.js';
import type { SourceSample } from '../../domain/sample.js';
import type { CallRecord } from '../../llm/callRecord.js';
import { simulatorScene } from '../harness/simulatorScene.js';

const scene = simulatorScene({ seed: 4, tmpPrefix: 'mmif-agreement-', scene: 3 });

function context(judgeAgreementSample: number, validate: 'strict' | 'paper' = 'strict') {
  return scene.context('agreement', { verification: { judgeAgreementSample }, dpo: { strategies: ['drop100'], validate } });
}

const CONSTRAINTS: PlannedConstraint[] = [
  rule('paragraph_number_limit', 'Your response must consist of exactly 2 paragraphs.', 'check_whether_response_paragraph_number_in_range', [2, 2]),
  rule('not_mention', "Do not mention the word 'boat'.", 'check_whether_whole_response_not_contain_certain_substrings', [['boat']]),
  { type: 'tone_requirement', value: 'Use a calm tone.', method: 'direct_judge', verifiers: [], selection: 'none' },
];
// One paragraph mentioning 'boat': both rules fail.
const ANSWER = 'A calm harbor with one boat at the pier.';
const subject = { task: { instruction: 'Describe the harbor.' }, constraints: CONSTRAINTS, answer: ANSWER, image: scene.image };

test('with the whole sample audited, every rule verdict carries the judge score; filtering verdicts are the same as without', async () => {
  const plainCalls: CallRecord[] = [];
  const plain = await verifyAnswer(context(0), subject, plainCalls);
  const auditedCalls: CallRecord[] = [];
  const audited = await verifyAnswer(context(1), subject, auditedCalls);

  assert.deepEqual(
    audited.map(({ judgeAudit: _a, ...v }) => v),
    plain,
    'the verdicts used for filtering do not change',
  );
  assert.ok(plain.every((v) => v.judgeAudit === undefined));
  const rules = audited.filter((v) => v.method === 'rule');
  assert.deepEqual(
    rules.map((v) => v.passed),
    [false, false],
  );
  for (const v of rules) {
    assert.equal(typeof v.judgeAudit?.passed, 'boolean', `rule verdict #${v.index} has a judge score`);
    assert.equal(v.judgeAudit!.judgeModel, 'mmif-sim-vlm');
    assert.match(v.judgeAudit!.detail, /^score [01]\/1$/);
  }
  assert.equal(audited.find((v) => v.method === 'direct_judge')!.judgeAudit, undefined, 'judged constraints are not audited');
  // The judged constraint's call is the same request (a cache hit would serve it); the audit is one more call.
  assert.equal(plainCalls.filter((c) => c.stage === 'judge').length, 1);
  assert.equal(auditedCalls.filter((c) => c.stage === 'judge').length, 2);
});

test('the sample is seeded by build seed and constraint: the same constraints are audited on every answer', async () => {
  const share = 0.5;
  const many = Array.from({ length: 40 }, (_, i) =>
    rule('mention', `Mention the word 'w${i}' at least once.`, 'check_whether_each_keyword_in_list_mentioned_in_range', [[`w${i}`], 1, 10000]),
  );
  const auditedOn = async (answer: string) => (await verifyAnswer(context(share), { ...subject, constraints: many, answer }, [])).flatMap((v) => (v.judgeAudit ? [v.index] : []));
  const first = await auditedOn('w1 w2 w3');
  assert.deepEqual(await auditedOn('w4 w5 and more'), first);
  assert.ok(first.length > 8 && first.length < 32, `about half of 40 audited, got ${first.length}`);
});

test('an unusable audit reply leaves the audit unscored and never rejects the sample', async () => {
  scene.sim.setFaults({ rateMalformed: 1 }); // every reply comes back empty
  try {
    const onlyRules = CONSTRAINTS.slice(0, 2);
    const verdicts = await verifyAnswer(context(1), { ...subject, constraints: onlyRules }, []);
    assert.deepEqual(
      verdicts.map((v) => [v.passed, v.judgeAudit?.passed]),
      [
        [false, null],
        [false, null],
      ],
    );
    assert.match(verdicts[0]!.judgeAudit!.detail, /^unusable: judge: empty-reply/);
  } finally {
    scene.sim.setFaults({ rateMalformed: 0 });
  }
});

test('dpo.validate "paper" asks no judge about the rejected answer, not even for the sample', async () => {
  const sample: SourceSample = { sampleId: 'cc3m-audit', source: 'cc3m', sourceId: 'a', licenseNote: '', image: { sourceIndex: 0, locator: { path: 'x' } } };
  const chosen = { answer: 'The chosen answer.', verdicts: CONSTRAINTS.map((c, index) => ({ index, type: c.type, method: c.method, passed: true, detail: 'passed' })) };
  const calls: CallRecord[] = [];
  const paper = await runRejectedStage(context(1, 'paper'), sample, subject.task, CONSTRAINTS, chosen, scene.image, calls);
  assert.deepEqual(
    calls.map((c) => c.stage),
    ['rejected'],
  );
  assert.ok(paper.verdicts.length > 0 && paper.verdicts.every((v) => v.method === 'rule' && v.judgeAudit === undefined));
  const strictCalls: CallRecord[] = [];
  const strict = await runRejectedStage(context(1, 'strict'), sample, subject.task, CONSTRAINTS, chosen, scene.image, strictCalls);
  // Strict validation judges the rejected answer (the drop100 pair is kept: it fails the dropped rules), and its rule verdicts get the judge's score.
  assert.ok(strictCalls.some((c) => c.stage === 'judge'));
  const ruleVerdicts = strict.verdicts.filter((v) => v.method === 'rule');
  assert.ok(ruleVerdicts.length > 0 && ruleVerdicts.every((v) => v.judgeAudit !== undefined));
});
