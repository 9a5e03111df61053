/**
 * The post-filter and DPO validation, run against the real simulator over HTTP. The simulator's
 * compliance rate and judge leniency steer whether answers follow their constraints.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { BuildConfigInput } from '../../config/buildConfig.js';
import { SampleRejection } from '../../domain/rejection.js';
import type { SourceSample } from '../../domain/sample.js';
import { runAnswerStage } from '../../pipeline/stages/answer/answerStage.js';
import { runRejectedStage } from '../../pipeline/stages/rejected/rejectedStage.js';
import type { PlannedConstraint } from '../../pipeline/run/stageState.js';
import type { Verdict } from '../../domain/verdict.js';
import { rule } from '../harness/plannedConstraints.js';
import { verifyAnswer } from '../../pipeline/stages/answer/verifyAnswer.js';
import { checkVisionDependence } from '../../pipeline/stages/answer/visionDependence.js';
import type { CallRecord } from '../../llm/callRecord.js';
import { simulatorScene } from '../harness/simulatorScene.js';

const scene = simulatorScene({ seed: 4, tmpPrefix: 'mmif-stages-', scene: 3 });

function context(overrides: Partial<BuildConfigInput> = {}) {
  return scene.context('stages', overrides);
}

const sample: SourceSample = { sampleId: 'cc3m-test', source: 'cc3m', sourceId: 't', licenseNote: '', image: { sourceIndex: 0, locator: { path: 'x' } } };
const judged = (type: string, value: string): PlannedConstraint => ({ type, value, method: 'direct_judge', verifiers: [], selection: 'none' });

const TASK = { instruction: 'Describe the harbor scene.' };

/** The chosen answer as the answer stage leaves it: every constraint passed, or failed. */
const verdictsOf = (constraints: readonly PlannedConstraint[], passed: boolean): { answer: string; verdicts: Verdict[] } => ({
  answer: 'The chosen answer.',
  verdicts: constraints.map((c, index) => ({ index, type: c.type, method: c.method, passed, detail: passed ? 'passed' : 'failed' })),
});
const passing = (constraints: readonly PlannedConstraint[]) => verdictsOf(constraints, true);
const RULES: PlannedConstraint[] = [
  rule('paragraph_number_limit', 'Your response must consist of exactly 3 paragraphs.', 'check_whether_response_paragraph_number_in_range', [3, 3]),
  rule('mention', "Mention the word 'harbor' at least twice.", 'check_whether_each_keyword_in_list_mentioned_in_range', [['harbor'], 2, 10000]),
  rule('not_mention', "Do not mention the words 'boat' or 'water'.", 'check_whether_whole_response_not_contain_certain_substrings', [['boat', 'water']]),
];

test('an answer that follows its constraints passes at the first attempt, with a verdict per constraint', async () => {
  scene.sim.setFaults({ complianceRate: 1, judgeLeniency: 1 });
  const result = await runAnswerStage(context(), TASK, [...RULES, judged('tone_requirement', 'Use a calm tone.')], scene.image, []);
  assert.equal(result.attempts, 1);
  assert.equal(result.passRate, 1);
  assert.deepEqual(
    result.verdicts.map((v) => [v.index, v.method, v.passed]),
    [
      [0, 'rule', true],
      [1, 'rule', true],
      [2, 'rule', true],
      [3, 'direct_judge', true],
    ],
  );
});

test('a compare-judged constraint is judged against the answer made without it in the answer stage, and directly when no such answer is given', async () => {
  scene.sim.setFaults({ complianceRate: 1, judgeLeniency: 1 });
  const constraints = [judged('tone_requirement', 'Use a calm tone.'), { ...judged('target_audience_requirement', 'Write for young children.'), method: 'compare_judge' as const }];
  const calls: CallRecord[] = [];
  const result = await runAnswerStage(context(), TASK, constraints, scene.image, calls);
  const compared = result.verdicts[1]!;
  assert.deepEqual([compared.method, typeof compared.without], ['compare_judge', 'string']);
  assert.equal(calls.filter((c) => c.stage === 'answer').length, 2, 'the answer and the one without the compare-judged constraint');
  const direct = await verifyAnswer(context(), { task: TASK, constraints, answer: result.answer, image: scene.image }, []);
  assert.deepEqual(
    direct.map((v) => [v.method, v.without]),
    [
      ['direct_judge', undefined],
      ['direct_judge', undefined],
    ],
  );
});

test('an answer below the threshold is regenerated, then the sample is rejected with per-constraint reasons', async () => {
  scene.sim.setFaults({ complianceRate: 0, judgeLeniency: 1 });
  scene.sim.resetStats();
  await assert.rejects(runAnswerStage(context(), TASK, RULES, scene.image, []), (err: unknown) => {
    assert.ok(err instanceof SampleRejection);
    assert.match(err.reason, /^answer: below-threshold: pass rate 0\.00 < 0\.8 after 3 answers; failed: #1 paragraph_number_limit/);
    assert.equal(err.details?.verdicts?.length, 3);
    return true;
  });
  assert.equal(scene.sim.stats().byStage.answer, 3, 'one answer and two regenerations');
});

test('a strict threshold (1.0) refuses an answer that misses one constraint of four', async () => {
  scene.sim.setFaults({ complianceRate: 1, judgeLeniency: 1 });
  const ctx = context({ verification: { passThreshold: 1, maxRegenerations: 0 } });
  const impossible = rule('word_count_range_limit', 'Write between 2 and 3 words.', 'check_whether_response_word_count_in_range', [2, 3]);
  await assert.rejects(runAnswerStage(ctx, TASK, [...RULES.slice(0, 2), impossible], scene.image, []), /below-threshold/);
});

test('a pair is kept when the rejected answer fails a dropped constraint, and records strategy and verdicts', async () => {
  scene.sim.setFaults({ complianceRate: 1, judgeLeniency: 1 });
  const result = await runRejectedStage(context({ dpo: { strategies: ['drop100'] } }), sample, TASK, RULES, passing(RULES), scene.image, []);
  assert.equal(result.strategy, 'drop100');
  assert.equal(result.dropped.length, 3);
  assert.equal(result.prompt, '## Task Description\nDescribe the harbor scene.');
  assert.ok(
    result.verdicts.some((v) => !v.passed),
    'without the constraints, the answer misses at least one',
  );
});

test('a rejected answer that still satisfies every dropped constraint is not kept', async () => {
  scene.sim.setFaults({ complianceRate: 1, judgeLeniency: 1 });
  const lenient = [
    judged('tone_requirement', 'Use a calm tone.'),
    judged('perspective_requirement', 'Write in the third person.'),
    judged('style_requirements', 'Write like a log entry.'),
  ];
  await assert.rejects(runRejectedStage(context({ dpo: { strategies: ['drop33'] } }), sample, TASK, lenient, passing(lenient), scene.image, []), (err: unknown) => {
    assert.ok(err instanceof SampleRejection);
    assert.match(err.reason, /^rejected: uninformative-pair: drop33 pair, after 3 rejected answers: the rejected answer satisfied every constraint at stake/);
    assert.deepEqual(err.details?.ruleRejections, { 'uninformative-pair': 3 });
    assert.equal(err.details?.strategy, 'drop33');
    assert.equal(err.details?.verdicts?.length, 1, 'ceil(3/3) = 1 constraint at stake');
    return true;
  });
});

test('no_image keeps every constraint in the prompt and puts every constraint at stake', async () => {
  scene.sim.setFaults({ complianceRate: 0, judgeLeniency: 1 });
  const result = await runRejectedStage(context({ dpo: { strategies: ['no_image'] } }), sample, TASK, RULES, passing(RULES), scene.image, []);
  assert.equal(result.strategy, 'no_image');
  assert.deepEqual(result.dropped, []);
  assert.equal(result.kept.length, 3);
  assert.equal(result.verdicts.length, 3);
});

test('judge replies that stay empty after every try reject the sample for the model call, not as failed verdicts', async () => {
  scene.sim.setFaults({ rateMalformed: 1 }); // judge replies come back empty
  try {
    const calls: CallRecord[] = [];
    await assert.rejects(
      verifyAnswer(
        context(),
        {
          task: { instruction: 'Describe.' },
          constraints: [judged('tone_requirement', 'Be calm.'), judged('perspective_requirement', 'Use the third person.')],
          answer: 'A calm harbor.',
          image: scene.image,
        },
        calls,
      ),
      (err: unknown) => err instanceof SampleRejection && /^judge: empty-reply: .*\(3 tries\)$/.test(err.reason) && err.details?.modelCall?.status === 200,
    );
    assert.deepEqual(
      calls.map((c) => [c.stage, c.problem]),
      Array(3).fill(['judge', 'empty-reply']),
      'each try recorded',
    );
  } finally {
    scene.sim.setFaults({ rateMalformed: 0 });
  }
});

/** Constraints a compliant answer meets when told, and an answer not told about them misses. */
const DISTINCTIVE: PlannedConstraint[] = [
  rule('prefix_and_suffix', "Start your response with 'Zebra report:'.", 'check_whether_response_start_with_certain_substring', ['Zebra report:']),
  rule('mention', "Mention the word 'quokka' at least twice.", 'check_whether_each_keyword_in_list_mentioned_in_range', [['quokka'], 2, 10000]),
  rule('paragraph_number_limit', 'Your response must consist of exactly 7 paragraphs.', 'check_whether_response_paragraph_number_in_range', [7, 7]),
];

test('a pair whose chosen answer fails a constraint the rejected answer passes is regenerated, then discarded as chosen-loses', async () => {
  scene.sim.setFaults({ complianceRate: 1, judgeLeniency: 1 });
  scene.sim.resetStats();
  const ctx = context({ dpo: { strategies: ['drop33'] } });
  // The chosen answer failed everything: the rejected answer (which follows the kept constraints) beats it on those.
  await assert.rejects(runRejectedStage(ctx, sample, TASK, DISTINCTIVE, verdictsOf(DISTINCTIVE, false), scene.image, []), (err: unknown) => {
    assert.ok(err instanceof SampleRejection);
    assert.match(err.reason, /^rejected: chosen-loses: drop33 pair, after 3 rejected answers: the chosen answer fails where the rejected one passes: #\d/);
    assert.deepEqual(err.details?.ruleRejections, { 'chosen-loses': 3 });
    // Verified on every rule-checked constraint, not only the one at stake.
    assert.deepEqual(
      err.details?.verdicts?.map((v) => v.index),
      [0, 1, 2],
    );
    assert.equal(err.details?.atStake?.length, 1);
    return true;
  });
  assert.equal(scene.sim.stats().byStage.answer, 3, 'one rejected answer and two regenerations, no judge');
});

test('a pair whose chosen answer passed everything is kept; the rejected answer is verified on every rule-checked constraint', async () => {
  scene.sim.setFaults({ complianceRate: 1, judgeLeniency: 1 });
  const result = await runRejectedStage(context({ dpo: { strategies: ['drop33'] } }), sample, TASK, DISTINCTIVE, passing(DISTINCTIVE), scene.image, []);
  assert.equal(result.validation, 'strict');
  assert.deepEqual(
    result.verdicts.map((v) => v.index),
    [0, 1, 2],
  );
  assert.equal(result.atStake.length, 1);
  assert.equal(result.verdicts.find((v) => v.index === result.atStake[0])!.passed, false, 'the dropped constraint is missed');
  assert.deepEqual(result.ruleRejections, {});
});

test('dpo.validate "paper" keeps the first rejected answer as generated, asks no judge, and records its rule verdicts', async () => {
  scene.sim.setFaults({ complianceRate: 1, judgeLeniency: 1 });
  scene.sim.resetStats();
  const lenient = [judged('tone_requirement', 'Use a calm tone.'), judged('perspective_requirement', 'Write in the third person.'), ...RULES.slice(0, 1)];
  // Under the strict rule this pair would be refused (see the chosen-loses test); the paper keeps it.
  const calls: CallRecord[] = [];
  const result = await runRejectedStage(context({ dpo: { strategies: ['drop33'], validate: 'paper' } }), sample, TASK, lenient, verdictsOf(lenient, false), scene.image, calls);
  assert.equal(result.validation, 'paper');
  assert.equal(result.attempts, 1);
  assert.deepEqual(
    result.verdicts.map((v) => v.method),
    ['rule'],
    'judged constraints are not verified under paper',
  );
  assert.deepEqual(
    calls.map((c) => c.stage),
    ['rejected'],
  );
});

test('one verdict per (constraint, text): a no_image rejected answer that is the blind answer keeps the vision-dependence scores, asking no judge again', async () => {
  // A judge that passes about half of what it sees: asked twice about one text in differently shaped prompts, it can disagree with itself.
  scene.sim.setFaults({ complianceRate: 0.5, judgeLeniency: 0.5 });
  const constraints: PlannedConstraint[] = [
    judged('tone_requirement', 'Use a calm and reflective tone.'),
    judged('perspective_requirement', 'Write from a third-person perspective.'),
    judged('target_audience_requirement', 'Write for young children.'),
    judged('wrap_up_requirement', "End with a one-sentence summary that begins with 'In summary'."),
    RULES[0]!,
  ];
  const overrides: Partial<BuildConfigInput> = {
    quality: { visionDependence: { filter: false } },
    dpo: { strategies: ['no_image'] },
    verification: { passThreshold: 0.01, maxRegenerations: 0, judgeAgreementSample: 0 },
  };
  let compared = 0;
  for (const instruction of ['Describe the harbor scene.', 'What is happening at the quay?', 'Describe the boats and the light.', 'What time of day is it here?']) {
    const task = { instruction };
    const ctx = context(overrides);
    const answer = await runAnswerStage(ctx, task, constraints, scene.image, []);
    const vision = answer.visionDependence!;
    const calls: CallRecord[] = [];
    const rejected = await runRejectedStage(ctx, sample, task, constraints, answer, scene.image, calls).then(
      (r) => ({ answer: r.answer, verdicts: r.verdicts }),
      (err: unknown) => {
        if (!(err instanceof SampleRejection)) throw err;
        return { answer: vision.blindAnswer, verdicts: err.details!.verdicts! }; // the one rejected answer (maxRegenerations 0)
      },
    );
    assert.equal(rejected.answer, vision.blindAnswer, 'under no_image the first rejected answer is the blind answer');
    assert.deepEqual(
      calls.filter((c) => c.stage === 'judge'),
      [],
      'no judge request for a text the sample already judged',
    );
    for (const g of vision.grounded) {
      const v = rejected.verdicts.find((x) => x.index === g.index)!;
      assert.equal(v.method, 'direct_judge');
      assert.equal(v.reusedFrom, 'vision_dependence', `#${g.index + 1} says which check decided it`);
      assert.equal(v.passed, g.passed === true, `#${g.index + 1}: one verdict on one text`);
      compared++;
    }
  }
  assert.ok(compared >= 16);
});

test('one verdict per (constraint, text): a blind answer that is the chosen answer keeps its direct-judge scores; a compare-judge verdict is not one of them', async () => {
  scene.sim.setFaults({ complianceRate: 0.5, judgeLeniency: 0.5 });
  const constraints: PlannedConstraint[] = [
    judged('tone_requirement', 'Use a calm and reflective tone.'),
    judged('perspective_requirement', 'Write from a third-person perspective.'),
    { ...judged('target_audience_requirement', 'Write for young children.'), method: 'compare_judge' },
    RULES[0]!,
  ];
  const ctx = context({ quality: { visionDependence: { filter: false } } });
  const task = { instruction: 'Describe the harbor scene.' };
  // First the blind answer's own scores; then a chosen answer with that very text, scored the other way by the chosen answer's judge.
  const first = await checkVisionDependence(ctx, task, constraints, { answer: 'An answer that looked at the image.', verdicts: [] }, scene.image, []);
  const chosenVerdicts: Verdict[] = first.grounded.map((g) => ({
    index: g.index,
    type: constraints[g.index]!.type,
    method: constraints[g.index]!.method,
    passed: g.passed !== true,
    detail: `score ${g.passed === true ? 0 : 1}/1`,
  }));
  const calls: CallRecord[] = [];
  const again = await checkVisionDependence(ctx, task, constraints, { answer: first.blindAnswer, verdicts: chosenVerdicts }, scene.image, calls);
  assert.equal(again.blindAnswer, first.blindAnswer);
  assert.deepEqual(
    again.grounded.map((g) => g.index),
    [0, 1, 2],
  );
  for (const g of again.grounded.slice(0, 2)) {
    assert.deepEqual(g, { index: g.index, passed: chosenVerdicts[g.index]!.passed, reusedFrom: 'answer' }, 'the chosen answer decided it: same text, same judge');
  }
  assert.equal(again.grounded[2]!.reusedFrom, undefined, 'a compare-judge verdict answers another question: judged directly here');
  assert.equal(calls.filter((c) => c.stage === 'judge' && !c.cached).length, 1, 'one judge request for the rest (the compare-judged constraint and the grounding check)');
});
