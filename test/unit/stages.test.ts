/**
 * The stage descriptors (config/stages.ts) are the one list of stages: each mode's stages run after
 * what they build on, routing derives each stage's task queue and Batch API use from its own model
 * role, every descriptor has its code in the registry, and docs/architecture.md's stage table is the
 * one `npm run docs:config` writes from them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { ARCHITECTURE_DOC, withStageTable } from '../../cli/writeConfigReference.js';
import { BUILD_MODES, parseBuildConfig } from '../../config/buildConfig.js';
import { MODEL_ROLES } from '../../config/modelsConfig.js';
import { batchStages, stageTaskQueues } from '../../config/endpointRouting.js';
import { STAGES } from '../../config/stages.js';
import { stageDefinitions } from '../../pipeline/stages/registry.js';

const config = (mode: string, models: Record<string, unknown>) =>
  parseBuildConfig({ buildId: 'b', output: '/tmp/out', sources: [{ type: 'cc3m', uri: '/data' }], maxSamples: 1, mode, models });

test("each mode's stages have distinct names and run after the stages they build on", () => {
  for (const mode of BUILD_MODES) {
    const names = STAGES[mode].map((s) => s.name);
    assert.equal(new Set(names).size, names.length, `${mode}: a stage name twice`);
    STAGES[mode].forEach((stage, i) => {
      for (const dep of stage.buildsOn) assert.ok(names.slice(0, i).includes(dep), `${mode}: '${stage.name}' builds on '${dep}', which does not run before it`);
    });
  }
});

test("a stage's activities run on its own model role's task queue; a stage calling no model has none", () => {
  const models = Object.fromEntries([['default', { model: 'm' }], ...MODEL_ROLES.map((role) => [role, { model: 'm', taskQueue: `queue-${role}` }])]);
  assert.deepEqual(stageTaskQueues(config('single', models)), {
    instruction: 'queue-instruction',
    constraints: 'queue-constraints',
    answer: 'queue-answer',
    rejected: 'queue-rejected',
  });
  assert.deepEqual(stageTaskQueues(config('multiturn', models)), { instruction: 'queue-instruction', constraints: 'queue-constraints', chat: 'queue-answer' });
});

test('the Batch API sends the first calls of the batchable stages whose own endpoint sets batch, and each of those has its first request', () => {
  assert.deepEqual(batchStages(config('single', { default: { model: 'm' }, constraints: { model: 'm', batch: true }, rejected: { model: 'm' } })), ['constraints']);
  assert.deepEqual(batchStages(config('single', { default: { model: 'm', batch: true } })), ['instruction', 'constraints', 'answer', 'rejected']);
  for (const mode of BUILD_MODES) {
    for (const stage of stageDefinitions(mode)) assert.equal(typeof stage.firstRequest === 'function', stage.batchable, `${mode}: '${stage.name}' firstRequest`);
  }
});

test('docs/architecture.md holds the stage table the descriptors generate', async () => {
  const committed = await readFile(ARCHITECTURE_DOC, 'utf8');
  assert.ok(committed === withStageTable(committed), 'docs/architecture.md is stale: run `npm run docs:config` and commit it');
  for (const stage of STAGES.single) assert.ok(committed.includes(`| \`${stage.name}\` | single`), `the table has a row for '${stage.name}'`);
});
