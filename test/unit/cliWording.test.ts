/**
 * What the CLI prints about rejects reads as English with one meaning per word: counts agree with
 * their nouns, the `rejected` stage is "the rejected answer stage" (so "rejected" means left
 * out), a reject's reason does not repeat its stage, and `inspect -n` says what it left out.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatSummary } from '../../cli/summary.js';
import { formatReject, moreLine } from '../../cli/commands/inspect.js';
import { reasonCode } from '../../config/rejectionReasons.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';

const report = {
  buildId: 'b1',
  datasetRoot: '/data/out/b1',
  simulated: false,
  shards: { planned: 1, committed: 1, failed: 0 },
  failedShards: [],
  counts: { planned: 6, instruct: 3, dpo: 1, rejectedSamples: 1, rejectedPairs: 2 },
  rejectsByStage: { rejected: 2, image: 1, constraints: 1 },
  usage: {},
  models: {},
  // The summary's planned count adds up the sources' accounting (every shard's, committed or not).
  accounting: [
    {
      source: 0,
      type: 'cc3m',
      name: 'cc3m',
      read: 6,
      planned: 6,
      notSelected: {},
      filtered: {},
      problems: {},
      accepted: 3,
      heldOut: 0,
      rejected: { 'too-small': 1, 'too-few-constraints': 1, other: 1 },
      uncommitted: 0,
      balanced: true,
    },
  ],
} as unknown as BuildReport;

test('the summary: a count agrees with its noun, and rejects by stage, in stage order, name the rejected answer stage', () => {
  const lines = formatSummary(report).split('\n');
  assert.ok(lines.includes('samples: 6 planned -> 3 MM-IFInstruct, 1 MM-IFDPO pairs, 1 rejected sample, 2 rejected pairs'), lines.join('\n'));
  assert.ok(lines.includes('rejected by stage: image 1, constraints 1, rejected answer 2'), lines.join('\n'));
});

test('inspect --rejects: what was left out, at which step, and its reason without the step repeated', () => {
  const base = { id: 's-1', source: 'chartqa', source_id: 'c7' };
  assert.equal(
    formatReject({ ...base, kind: 'sample', stage: 'constraints', reason: 'constraints: too-few-constraints: 2 left after removing conflicts, at least 3 required' }),
    's-1  (chartqa c7) sample rejected at the constraints stage: too-few-constraints: 2 left after removing conflicts, at least 3 required',
  );
  assert.equal(
    formatReject({ ...base, kind: 'pair', stage: 'rejected', reason: 'rejected: uninformative-pair: the rejected answer passes every constraint at stake' }),
    's-1  (chartqa c7) pair rejected at the rejected answer stage: uninformative-pair: the rejected answer passes every constraint at stake',
  );
  // A model role's failure at a step keeps its role: it says which call failed.
  assert.equal(
    formatReject({ ...base, kind: 'sample', stage: 'answer', reason: 'judge: invalid-json: after repair' }),
    's-1  (chartqa c7) sample rejected at the answer stage: judge: invalid-json: after repair',
  );
  // What the sample passed before it was refused, as far as it got: the staged image, the instruction, the constraints with the last answer's verdicts.
  const constraints = [
    { type: 'length', value: 'at most 50 words', method: 'rule' as const },
    { type: 'tone', value: 'formal', method: 'direct_judge' as const },
  ];
  assert.equal(
    formatReject({
      ...base,
      kind: 'sample',
      stage: 'answer',
      reason: 'answer: constraints-failed: 1 of 2 after 3 attempts',
      staged_image_path: '_work/images/ab/abcd.jpg',
      instruction: 'Describe the chart.',
      constraints,
      // In the order the verifiers answered: each verdict names its constraint.
      verdicts: [
        { index: 1, type: 'tone', method: 'direct_judge', passed: false, detail: 'casual' },
        { index: 0, type: 'length', method: 'rule', passed: true, detail: '42 words' },
      ],
    }),
    [
      's-1  (chartqa c7) sample rejected at the answer stage: constraints-failed: 1 of 2 after 3 attempts',
      'image (staged, not published): _work/images/ab/abcd.jpg',
      'instruction: Describe the chart.',
      "constraints, with the last answer's verdicts:",
      '  1. [length, rule] at most 50 words  PASS (42 words)',
      '  2. [tone, direct_judge] formal  FAIL (casual)',
    ].join('\n'),
  );
  assert.equal(
    formatReject({ ...base, kind: 'pair', stage: 'rejected', reason: 'rejected: uninformative-pair: x', instruction: 'Describe the chart.', constraints, verdicts: [] })
      .split('\n')
      .slice(2)
      .join('\n'),
    ['constraints:', '  1. [length, rule] at most 50 words  ', '  2. [tone, direct_judge] formal  '].join('\n'),
  );
  assert.equal(reasonCode('constraints: too-few-constraints: 2 left'), 'too-few-constraints');
  assert.equal(reasonCode('over-target: met'), 'over-target');
});

test('inspect -n: how many more there are and the command that shows them all', () => {
  const args = ['--output', 'out', '--build-id', 'b1', '--rejects', '-n', '3'];
  assert.equal(
    moreLine(3, 10, 'rejects in this shard', args),
    '... 7 more rejects in this shard (10 in all): `mmif inspect --output out --build-id b1 --rejects -n 10` shows them all',
  );
  assert.equal(moreLine(3, 3, 'rejects', args), undefined);
  assert.equal(moreLine(2, 2, 'records', ['--output', 'out', '--build-id', 'b1']), undefined);
});
