/**
 * Record assembly: the training prompt is written in the configured template while the generation
 * prompt is kept beside it; calls are written as MM-IFEval's scorer names them; a text holding the
 * literal `<image>` cannot become a training row and is rejected with its reason; a rejection carries
 * what its sample passed. Parquet's nested
 * fields, as Python reads them: test/integration/recordsParquet.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assembleSample } from '../../output/commit/records.js';
import { answerPromptText } from '../../prompts/answerPrompt.js';
import { constraints, instruction, sample, states } from '../fixtures/recordStates.js';
import type { SampleStates } from '../../output/contracts/records.js';

test('inline: the user turn is make_prompt_v2 and the generation prompt stays numbered', () => {
  const { instruct, dpo } = assembleSample(sample, states(), { template: 'inline', seed: 0 });
  const inline = "Describe the harbor. Mention 'harbor' at least twice. Use a calm tone.";
  assert.equal(instruct!.prompt, inline);
  assert.equal(instruct!.prompt_template, 'inline');
  assert.equal(instruct!.generation_prompt, answerPromptText(instruction, constraints));
  assert.equal(dpo!.prompt, inline, 'the pair is trained on the same user turn');
  assert.equal(dpo!.rejected_prompt, answerPromptText(instruction, constraints.slice(1)));
  assert.deepEqual(
    instruct!.constraints.map((c) => c.type),
    ['mention', 'tone_requirement'],
    'the record keeps the constraint list',
  );
});

test('numbered writes the generation form; mixed records the form each sample drew', () => {
  const numbered = assembleSample(sample, states(), { template: 'numbered', seed: 0 }).instruct!;
  assert.equal(numbered.prompt, answerPromptText(instruction, constraints));
  assert.equal(numbered.prompt_template, 'numbered');
  const drawn = [0, 1, 2, 3, 4, 5, 6, 7].map((seed) => assembleSample(sample, states(), { template: 'mixed', seed }).instruct!);
  assert.deepEqual(new Set(drawn.map((r) => r.prompt_template)), new Set(['inline', 'numbered']));
  for (const r of drawn)
    assert.equal(r.prompt, r.prompt_template === 'inline' ? "Describe the harbor. Mention 'harbor' at least twice. Use a calm tone." : answerPromptText(instruction, constraints));
});

test("calls are written under the scorer's spelling, in constraints and verdicts alike", () => {
  const { instruct, dpo } = assembleSample(sample, states(), { template: 'inline', seed: 0 });
  const reference = 'check_whether_each_keyword_in_list_metioned_in_range';
  assert.equal(instruct!.constraints[0]!.verifiers[0]!.func, reference);
  assert.equal(instruct!.verdicts[0]!.calls![0]!.func, reference);
  assert.equal(dpo!.rejected_verdicts[0]!.calls![0]!.func, reference);
});

test('a literal <image> in an answer rejects the sample, in a rejected answer the pair, naming the field', () => {
  const sampleReject = assembleSample(sample, states('See <image> here.'), { template: 'inline', seed: 0 });
  assert.equal(sampleReject.instruct, undefined);
  assert.equal(sampleReject.reject!.kind, 'sample');
  assert.match(sampleReject.reject!.reason, /^image-token-in-text: the answer contains the literal <image>/);
  const pairReject = assembleSample(sample, states(undefined, 'Look: <image>'), { template: 'inline', seed: 0 });
  assert.ok(pairReject.instruct && !pairReject.dpo);
  assert.equal(pairReject.reject!.kind, 'pair');
  assert.match(pairReject.reject!.reason, /^image-token-in-text: the rejected answer contains/);
});

test('a rejection carries what its sample passed: the staged image, instruction and constraints of the stages that passed', () => {
  const staged = `_work/images/ab/${'ab'.repeat(32)}.jpg`;
  const written = constraints.map(({ type, value, method }) => ({ type, value, method }));
  const pairReject = assembleSample(sample, states(undefined, 'Look: <image>'), { template: 'inline', seed: 0 }).reject!;
  assert.deepEqual([pairReject.staged_image_path, pairReject.instruction, pairReject.constraints], [staged, instruction, written]);
  const refused = { ...states(), constraints: { status: 'rejected', stage: 'constraints', reason: 'no-constraints', calls: [] } } as SampleStates;
  const sampleReject = assembleSample(sample, refused, { template: 'inline', seed: 0 }).reject!;
  assert.deepEqual([sampleReject.kind, sampleReject.staged_image_path, sampleReject.instruction, sampleReject.constraints], ['sample', staged, instruction, undefined]);
  const { image: _image, ...imageless } = states();
  const incomplete = assembleSample(sample, imageless as SampleStates, { template: 'inline', seed: 0 }).reject!;
  assert.equal(incomplete.reason, "incomplete: stage 'image' never ran");
  assert.equal(incomplete.staged_image_path, undefined);
  // Written as a line of rejects/shard-<n>.jsonl: snake_case, nothing of the constraint's verifiers.
  assert.deepEqual(Object.keys(JSON.parse(JSON.stringify(pairReject)) as object).sort(), [
    'constraints',
    'id',
    'instruction',
    'kind',
    'reason',
    'source',
    'source_id',
    'stage',
    'staged_image_path',
  ]);
});
