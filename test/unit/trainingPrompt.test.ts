import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseBuildConfig } from '../../config/buildConfig.js';
import { templateForSample, trainingPromptText } from '../../prompts/trainingPrompt.js';

const constraints = [
  { type: 'paragraph_number', value: 'Write exactly 3 paragraphs.' },
  { type: 'tone_requirement', value: 'Use a calm tone.' },
];

test('inline is make_prompt_v2: the instruction, then each constraint, joined by single spaces', () => {
  assert.equal(trainingPromptText('inline', 'Describe the harbor.', constraints), 'Describe the harbor. Write exactly 3 paragraphs. Use a calm tone.');
  assert.equal(trainingPromptText('inline', 'Describe the harbor.', []), 'Describe the harbor.');
});

test('numbered is the generation form of the reference (make_prompt)', () => {
  assert.equal(
    trainingPromptText('numbered', 'Describe the harbor.', constraints),
    '## Task Description\nDescribe the harbor.\n\n## Constraints\nYou must strictly follow the constraints below:\n1. Write exactly 3 paragraphs.\n2. Use a calm tone.',
  );
});

test('mixed draws per sample from the seed: stable, order-free, and both forms occur', () => {
  const ids = Array.from({ length: 200 }, (_, i) => `sample-${i}`);
  const draw = (seed: number) => ids.map((id) => templateForSample('mixed', seed, id));
  assert.deepEqual(draw(7), draw(7));
  assert.notDeepEqual(draw(7), draw(8));
  const inline = draw(7).filter((t) => t === 'inline').length;
  assert.ok(inline > 70 && inline < 130, `about half inline, got ${inline}/200`);
  assert.equal(templateForSample('numbered', 7, 'sample-1'), 'numbered');
  assert.equal(templateForSample('inline', 7, 'sample-1'), 'inline');
});

test('the config defaults to inline and refuses an unknown template by name', () => {
  const base = { buildId: 'b', output: '/tmp/o', maxSamples: 1, sources: [{ type: 'cc3m', uri: '/tmp/cc3m' }], models: { default: { model: 'm' } } };
  assert.equal(parseBuildConfig(base).training.promptTemplate, 'inline');
  assert.equal(parseBuildConfig({ ...base, training: { promptTemplate: 'mixed' } }).training.promptTemplate, 'mixed');
  assert.throws(() => parseBuildConfig({ ...base, training: { promptTemplate: 'chat' } }), /training\.promptTemplate/);
});
