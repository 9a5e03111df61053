/**
 * `npm run docs:config`: rewrites what is generated from the config schemas: the reference at the
 * end of docs/configuration.md (config/configReference.ts), and examples/build-config.schema.json
 * and examples/eval-input.schema.json, the JSON Schemas the examples name in `$schema`
 * (config/jsonSchema.ts, what `mmif schema [--eval]` prints).
 * test/unit/configReference.test.ts fails when a committed file differs from what this writes, so a
 * schema change without a re-run is caught.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { configReferenceMarkdown } from '../config/configReference.js';
import { buildConfigJsonSchema, evalConfigJsonSchema } from '../config/jsonSchema.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const CONFIG_DOC = path.join(REPO, 'docs/configuration.md');
export const SCHEMA_FILE = path.join(REPO, 'examples/build-config.schema.json');
export const EVAL_SCHEMA_FILE = path.join(REPO, 'examples/eval-input.schema.json');

/** The configs' JSON Schemas as committed (and as `mmif schema [--eval]` prints them). */
export const schemaText = () => `${JSON.stringify(buildConfigJsonSchema(), null, 2)}\n`;
export const evalSchemaText = () => `${JSON.stringify(evalConfigJsonSchema(), null, 2)}\n`;
export const BEGIN = '<!-- BEGIN GENERATED REFERENCE: npm run docs:config -->';
export const END = '<!-- END GENERATED REFERENCE -->';

/** `doc` with the text between the markers replaced by the current reference. */
export function withReference(doc: string): string {
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) throw new Error(`docs/configuration.md: the markers ${BEGIN} ... ${END} are missing`);
  return `${doc.slice(0, start + BEGIN.length)}\n\n${configReferenceMarkdown()}\n\n${doc.slice(end)}`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await writeFile(CONFIG_DOC, withReference(await readFile(CONFIG_DOC, 'utf8')));
  await mkdir(path.dirname(SCHEMA_FILE), { recursive: true });
  await writeFile(SCHEMA_FILE, schemaText());
  await writeFile(EVAL_SCHEMA_FILE, evalSchemaText());
  console.log(`wrote ${[CONFIG_DOC, SCHEMA_FILE, EVAL_SCHEMA_FILE].map((f) => path.relative(process.cwd(), f)).join(', ')}`);
}
