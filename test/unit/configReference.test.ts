/**
 * docs/configuration.md's reference is generated from the config schemas (`npm run docs:config`);
 * this fails when the committed file is not what the current schemas give, naming the command.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { CONFIG_DOC, EVAL_SCHEMA_FILE, evalSchemaText, SCHEMA_FILE, schemaText, withReference } from '../../cli/writeConfigReference.js';
import { configReferenceMarkdown } from '../../config/configReference.js';
import { SOURCE_DEFINITIONS } from '../../sources/registry.js';

test('docs/configuration.md holds the reference the current schemas generate', async () => {
  const committed = await readFile(CONFIG_DOC, 'utf8');
  assert.ok(committed === withReference(committed), 'docs/configuration.md is stale: run `npm run docs:config` and commit it');
});

test('examples/build-config.schema.json and eval-input.schema.json are the schemas the current configs give', async () => {
  assert.ok((await readFile(SCHEMA_FILE, 'utf8')) === schemaText(), 'examples/build-config.schema.json is stale: run `npm run docs:config` and commit it');
  assert.ok((await readFile(EVAL_SCHEMA_FILE, 'utf8')) === evalSchemaText(), 'examples/eval-input.schema.json is stale: run `npm run docs:config` and commit it');
});

test('the reference lists each field with its type, default and limits', () => {
  const reference = configReferenceMarkdown();
  assert.match(reference, /^\| `buildId` \| string \| \*\*required\*\* \| length ≤ 100, /m);
  assert.match(reference, /^\| `shardSize` \| integer \| `64` \| ≥ 1, ≤ 5000 \|$/m);
  assert.match(reference, /^\| `models\.<key>\.model` \| string \| \*\*required\*\* \|/m);
  assert.match(reference, /^\| `llm\.prices\.<key>\.batchDiscount` \| number \| `0\.5` \| ≥ 0, ≤ 1 \|$/m);
  // Each source type's own fields, under its heading; `layout` only where it is allowed.
  assert.match(reference, /`type: "chartqa"`:\n\n\| field[^\n]*\n[^\n]*\n(\|[^\n]*\n)*\| `attachTables` \| boolean \| `true` \|/);
  assert.equal(reference.match(/^\| `layout` /gm)?.length, SOURCE_DEFINITIONS.filter((d) => 'layout' in d.fields).length);
});

test('a stale reference is detected', async () => {
  const committed = await readFile(CONFIG_DOC, 'utf8');
  const stale = committed.replace('| `shardSize` | integer | `64` |', '| `shardSize` | integer | `32` |');
  assert.notEqual(stale, committed);
  assert.notEqual(withReference(stale), stale);
});
