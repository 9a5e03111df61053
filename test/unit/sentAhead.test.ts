/**
 * Which stages' first calls go out beside a stage (pipeline/run/sentAhead.ts): those whose descriptor
 * names it as `firstRequestBeside` (the rejected answer beside the answer stage), unless the Batch API
 * sends that call or the stage runs on another task queue.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseBuildConfig, type BuildConfigInput } from '../../config/buildConfig.js';
import { stagesSentBeside } from '../../pipeline/run/sentAhead.js';

const config = (models: BuildConfigInput['models'], mode: 'single' | 'multiturn' = 'single') =>
  parseBuildConfig({
    buildId: 'ahead',
    output: '/tmp/ahead',
    maxSamples: 1,
    models,
    sources: [{ type: 'cc3m', uri: '/tmp/none', layout: 'files' }],
    mode,
    ...(mode === 'multiturn' ? { chat: { turns: 4, maxInstructions: 3 } } : {}),
  });
const names = (c: ReturnType<typeof config>, stage: Parameters<typeof stagesSentBeside>[1]) => stagesSentBeside(c, stage).map((d) => d.name);

test('the rejected answer goes out beside the answer stage, and nothing beside any other stage', () => {
  const plain = config({ default: { model: 'm' } });
  assert.deepEqual(names(plain, 'answer'), ['rejected']);
  for (const stage of ['image', 'instruction', 'constraints', 'rejected'] as const) assert.deepEqual(names(plain, stage), [], stage);
  const chat = config({ default: { model: 'm' } }, 'multiturn');
  for (const stage of ['image', 'instruction', 'constraints', 'chat'] as const) assert.deepEqual(names(chat, stage), [], stage);
});

test('not when the Batch API sends the rejected answer, nor when the rejected stage runs on another task queue', () => {
  assert.deepEqual(names(config({ default: { model: 'm' }, rejected: { model: 'm', batch: true } }), 'answer'), []);
  assert.deepEqual(names(config({ default: { model: 'm' }, rejected: { model: 'm', taskQueue: 'gpu-b' } }), 'answer'), []);
  // Both on one queue of their own: sent beside.
  assert.deepEqual(names(config({ default: { model: 'm', taskQueue: 'gpu-a' } }), 'answer'), ['rejected']);
});
