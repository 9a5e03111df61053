/**
 * How constraints map to the judge methods of MM-IFEval's scorer (eval_mmifeval/ of
 * github.com/SYuan03/MM-IFEngine): only calls the reference code can make stay rule_based.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isHeldOutImage, mmifevalLines, scorerConstraint } from '../../output/formats/mmifeval.js';
import { reserveHeldOut } from '../../output/commit/heldOut.js';
import type { AssembledSample, DpoRecord, InstructRecord } from '../../output/contracts/records.js';
import type { PlannedConstraint } from '../../pipeline/run/stageState.js';

const rule = (type: string, func: string, params: unknown[]): PlannedConstraint => ({
  type,
  value: `${type} text`,
  method: 'rule',
  verifiers: [{ func, params }],
  selection: 'parser',
});

test('reference functions stay rule_based with their calls; our functions beyond the reference go to the judge', () => {
  assert.deepEqual(scorerConstraint(rule('mention', 'check_whether_each_keyword_in_list_metioned_in_range', [['a'], 1, 3])), {
    key: 'mention',
    value: 'mention text',
    judge: { method: 'rule_based', verify_funcs: [{ func: 'check_whether_each_keyword_in_list_metioned_in_range', params: [['a'], 1, 3] }] },
  });
  assert.equal(scorerConstraint(rule('precision', 'check_scientific_notation_precision_in_response', [3])).judge.method, 'direct_gpt');
  assert.equal(scorerConstraint({ type: 'tone', value: 'calm', method: 'compare_judge', verifiers: [], selection: 'none' }).judge.method, 'cmp_gpt');
  assert.equal(scorerConstraint({ type: 'bold', value: 'bold nouns', method: 'direct_judge', verifiers: [], selection: 'none' }).judge.method, 'direct_gpt');
});

test('a compare-judged constraint gets an aux line without it; indexes are unique; repeated types are refused by name', () => {
  const record = {
    id: 's1',
    image_path: 'images/ab/x.jpg',
    instruction: 'Describe.',
    constraints: [
      rule('length', 'check_whether_response_word_count_in_range', [10, 20]),
      { type: 'tone', value: 'calm', method: 'compare_judge', verifiers: [], selection: 'none' },
    ],
  } as unknown as InstructRecord;
  const lines = mmifevalLines([record, { ...record, id: 's2' }]);
  assert.deepEqual(
    lines.map((l) => [l.id, l.index, l.infer_type, l.del_cons ?? null, l.constraints.map((c) => c.key)]),
    [
      ['s1', 0, 'main', null, ['length', 'tone']],
      ['s1', 1, 'aux_cmp_gpt', 'tone', ['length']],
      ['s2', 2, 'main', null, ['length', 'tone']],
      ['s2', 3, 'aux_cmp_gpt', 'tone', ['length']],
    ],
  );
  const repeated = { ...record, constraints: [record.constraints[0]!, record.constraints[0]!] } as InstructRecord;
  assert.throws(() => mmifevalLines([repeated]), /record s1: constraint types repeat \(length, length\)/);
});

test('the held-out draw depends on seed and image only', () => {
  const images = Array.from({ length: 1000 }, (_, i) => `sha${i}`);
  const drawn = images.filter((sha) => isHeldOutImage(7, sha, 0.1));
  assert.deepEqual(
    drawn,
    images.filter((sha) => isHeldOutImage(7, sha, 0.1)),
  );
  assert.ok(drawn.length > 60 && drawn.length < 140, `about 10%, got ${drawn.length}`);
  assert.notDeepEqual(
    drawn,
    images.filter((sha) => isHeldOutImage(8, sha, 0.1)),
  );
});

test("a build's held-out split is disjoint from its training records by image: samples sharing an image fall on one side, with their pairs", () => {
  // 200 images, two questions each (as ChartQA's two per chart), every sample with an SFT record and a pair.
  const assembled: AssembledSample[] = [];
  for (let i = 0; i < 400; i++) {
    const image_sha256 = `img${i >> 1}`;
    assembled.push({ instruct: { id: `s${i}`, image_sha256 } as InstructRecord, dpo: { sample_id: `s${i}`, image_sha256 } as DpoRecord, passed: {}, calls: [] });
  }
  assembled.push({ reject: { id: 'r', source: 'cc3m', source_id: 'r', kind: 'sample', stage: 'image', reason: 'too-small' }, passed: {}, calls: [] });
  const share = reserveHeldOut(assembled, { seed: 3, fraction: 0.2 });
  const heldImages = new Set(share.instruct.map((r) => r.image_sha256));
  const trainImages = new Set(assembled.flatMap((a) => [a.instruct?.image_sha256, a.dpo?.image_sha256].filter((x): x is string => x !== undefined)));
  assert.ok(heldImages.size > 20 && heldImages.size < 60, `about 20% of 200 images, got ${heldImages.size}`);
  assert.deepEqual(
    [...heldImages].filter((sha) => trainImages.has(sha)),
    [],
    'no image on both sides',
  );
  assert.equal(heldImages.size + trainImages.size, 200);
  assert.equal(share.instruct.length, 2 * heldImages.size, 'both questions of a held-out image are held out');
  assert.equal(share.dpo, share.instruct.length, 'their pairs leave the training data too');
  assert.ok(assembled.at(-1)!.reject, 'rejections are untouched');
});
