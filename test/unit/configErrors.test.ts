/**
 * Config errors a user writing a config by hand can act on: the minimum a missing object needs, the
 * closest known name for an unknown field, a source type in the wrong case recognised.
 */
import { SOURCE_TYPES } from '../../sources/registry.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseBuildConfig } from '../../config/buildConfig.js';
import { parseEvalConfig } from '../../config/evalConfig.js';

const base = { buildId: 'b', output: 'out', sources: [{ type: 'cc3m', uri: 'data' }], maxSamples: 4, models: { default: { model: 'm' } } };

function messageOf(input: unknown, parse: (input: unknown) => unknown = parseBuildConfig): string {
  try {
    parse(input);
  } catch (err) {
    return (err as Error).message;
  }
  assert.fail('the config parsed');
}

test('a missing object names the minimum it needs', () => {
  const { models: _, ...noModels } = base;
  assert.equal(messageOf(noModels), 'invalid build config: models.default.model is required');
  assert.equal(messageOf({ ...base, models: {} }), 'invalid build config: models.default.model is required');
  assert.equal(messageOf({ ...base, models: { default: {} } }), 'invalid build config: models.default.model is required');
  const { maxSamples: __, ...noMax } = base;
  assert.equal(messageOf(noMax), 'invalid build config: maxSamples is required');
  assert.equal(messageOf({ evalId: 'e', data: 'd' }, parseEvalConfig), 'invalid eval config: model.model is required');
});

test('an unknown field gets the closest known name, at any depth', () => {
  assert.equal(messageOf({ ...base, shardsize: 8 }), 'invalid build config: shardsize: unknown field; did you mean shardSize?');
  assert.equal(messageOf({ ...base, llm: { temprature: 1 } }), 'invalid build config: llm.temprature: unknown field; did you mean temperature?');
  assert.equal(messageOf({ ...base, sources: [{ type: 'cc3m', uri: 'd', Layout: 'flat' }] }), 'invalid build config: sources.0.Layout: unknown field; did you mean layout?');
  // Inside a source, the fields of its own type are the candidates.
  assert.equal(
    messageOf({ ...base, sources: [{ type: 'chartqa', uri: 'd', attachTable: false }] }),
    'invalid build config: sources.0.attachTable: unknown field; did you mean attachTables?',
  );
  assert.equal(messageOf({ ...base, colour: 'red' }), 'invalid build config: colour: unknown field');
});

test('a source type or enum value in the wrong case is recognised', () => {
  assert.equal(
    messageOf({ ...base, sources: [{ type: 'ChartQA', uri: 'd' }] }),
    `invalid build config: sources.0.type: "ChartQA" is not one of ${SOURCE_TYPES.join(', ')}; did you mean "chartqa"?`,
  );
  assert.equal(messageOf({ ...base, sources: [{ type: 'coco', uri: 'd' }] }), `invalid build config: sources.0.type: "coco" is not one of ${SOURCE_TYPES.join(', ')}`);
  assert.equal(messageOf({ ...base, mode: 'Multiturn' }), 'invalid build config: mode: "Multiturn" is not one of single, multiturn; did you mean "multiturn"?');
});

test('several problems are all listed; other messages keep their field', () => {
  assert.equal(
    messageOf({ ...base, maxSamples: 0, shardsize: 8 }),
    'invalid build config: maxSamples: Too small: expected number to be >0; shardsize: unknown field; did you mean shardSize?',
  );
});

test('$schema is for editors: accepted and left out of the config', () => {
  const config = parseBuildConfig({ $schema: '../schema/build-config.schema.json', ...base });
  assert.equal('$schema' in config, false);
});
