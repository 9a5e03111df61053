/**
 * The source registry (sources/registry.ts) is the one list of source types: the config schema,
 * `mmif init`, the dataset card, the docs table and the readers are derived from it. Each check here
 * reads a derived artefact and compares it to the registry, never to a hand-kept copy.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { parseBuildConfig } from '../../config/buildConfig.js';
import { buildConfigJsonSchema, type JsonSchema } from '../../config/jsonSchema.js';
import { INIT_USAGE, starterConfig } from '../../cli/commands/init.js';
import { SOURCES_BEGIN, SOURCES_DOC, SOURCES_END, withSourceTable } from '../../cli/writeConfigReference.js';
import { CARD_FEATURES } from '../../output/reports/datasetCard.js';
import { SOURCE_DEFINITIONS, SOURCE_TYPES } from '../../sources/registry.js';
import { openSource } from '../../sources/source.js';
import { sourceSchema } from '../../config/sourceConfig.js';

test('the config schema accepts exactly the registered types', () => {
  const sources = (buildConfigJsonSchema().properties as Record<string, JsonSchema>).sources!;
  const options = ((sources.items as JsonSchema).oneOf ?? (sources.items as JsonSchema).anyOf) as JsonSchema[];
  const types = options.map((o) => (o.properties as Record<string, JsonSchema>).type!.const as string);
  assert.deepEqual(types, [...SOURCE_TYPES]);
  assert.throws(() => sourceSchema.parse({ type: 'not-a-type', uri: '/x' }));
});

test('mmif init offers every registered type, and each starter entry parses', () => {
  for (const type of SOURCE_TYPES) {
    assert.ok(INIT_USAGE.includes(type), `init's usage names ${type}`);
    const config = starterConfig({ buildId: 'b', output: 'out', model: 'm', samples: 10, sources: [{ type, uri: '/data' }] }, 'schema.json');
    const { $schema: _, ...input } = config;
    assert.equal(parseBuildConfig(input).sources[0]!.type, type);
  }
});

test('the dataset card names every registered type', () => {
  const source = CARD_FEATURES.instruct.find(([column]) => column === 'source')!;
  for (const type of SOURCE_TYPES) assert.ok(source[2].includes(type), `card names ${type}`);
});

test('docs/sources.md holds the table the registry generates, one row per type in its order', async () => {
  const committed = await readFile(SOURCES_DOC, 'utf8');
  assert.ok(committed === withSourceTable(committed), 'docs/sources.md is stale: run `npm run docs:config` and commit it');
  const table = committed.slice(committed.indexOf(SOURCES_BEGIN), committed.indexOf(SOURCES_END));
  const rows = [...table.matchAll(/^\| `([a-z0-9]+)` \|/gm)].map((m) => m[1]).slice(1); // after the header's `type`
  assert.deepEqual(rows, [...SOURCE_TYPES]);
  for (const d of SOURCE_DEFINITIONS) assert.ok(d.docs.hub.length > 0, `${d.type} names where its data comes from`);
});

test('every registered type opens a reader (opening reads nothing)', () => {
  for (const d of SOURCE_DEFINITIONS) {
    const config = sourceSchema.parse({ type: d.type, uri: '/nowhere' });
    const reader = openSource(config, 0, {});
    for (const method of ['segments', 'readImage', 'origin', 'describe'] as const) assert.equal(typeof reader[method], 'function', `${d.type}.${method}`);
  }
});
