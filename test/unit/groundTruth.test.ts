/**
 * A record's ground truth (domain/groundTruth.ts): a compare-judged constraint carries the build's
 * answer without it, taken from the accepted answer's verdict; a record that holds none is refused
 * with one line naming the record and the constraint, never exported with a ground truth no reward
 * can judge as the build did.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { groundTruthOf, groundTruthSchema, MissingComparisonError } from '../../domain/groundTruth.js';

const record = {
  id: 'src-1',
  image_path: 'images/ab/cd.jpg',
  constraints: [
    {
      type: 'paragraph_number_limit',
      value: 'Write 2 paragraphs.',
      method: 'rule' as const,
      verifiers: [{ func: 'check_whether_response_paragraph_number_in_range', params: [2, 2] }],
    },
    { type: 'tone_requirement', value: 'Sound cheerful.', method: 'compare_judge' as const, verifiers: [] },
    { type: 'perspective_requirement', value: 'Write in the third person.', method: 'direct_judge' as const, verifiers: [] },
  ],
};

test("a compare-judged constraint's ground truth holds the answer the build compared with; the others hold none", () => {
  const truth = groundTruthOf(
    {
      ...record,
      verdicts: [
        { index: 0, method: 'rule' },
        { index: 1, method: 'compare_judge', without: 'A plain answer.' },
        { index: 2, method: 'direct_judge' },
      ],
    },
    'fail',
  );
  assert.deepEqual(truth.constraints[1], { type: 'tone_requirement', text: 'Sound cheerful.', method: 'compare_judge', without: 'A plain answer.' });
  assert.deepEqual(truth.constraints[2], { type: 'perspective_requirement', text: 'Write in the third person.', method: 'direct_judge' });
  assert.deepEqual(groundTruthSchema.parse(truth), truth);
  assert.throws(() => groundTruthSchema.parse({ ...truth, constraints: [{ type: 'tone_requirement', text: 'Sound cheerful.', method: 'compare_judge' }] }), /without/);
});

test('a record whose compare-judged verdict holds no answer without the constraint is refused, naming the record and the constraint', () => {
  assert.throws(
    () => groundTruthOf({ ...record, verdicts: [{ index: 1, method: 'compare_judge' }] }, 'fail'),
    (err: unknown) => err instanceof MissingComparisonError && /^record src-1: constraint 1 \(tone_requirement\) is compare-judged/.test(err.message),
  );
});
