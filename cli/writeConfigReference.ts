/**
 * `npm run docs:config`: rewrites what is generated from config/: the reference at the end of
 * docs/configuration.md (config/configReference.ts), examples/build-config.schema.json and
 * examples/eval-input.schema.json, the JSON Schemas the examples name in `$schema`
 * (config/jsonSchema.ts, what `mmif schema [--eval]` prints), docs/architecture.md's stage table
 * (config/stageTable.ts) and docs/sources.md's source-type table (sources/sourceDocs.ts, from the
 * source registry; test/unit/sourceRegistry.test.ts checks it), and docs/data-quality.md's list of
 * where prompts depart from the paper's figures (prompts/departures.ts; test/unit/promptDepartures.test.ts). test/unit/configReference.test.ts and stages.test.ts fail when a committed
 * file differs from what this writes, so a change without a re-run is caught.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { configReferenceMarkdown } from '../config/configReference.js';
import { buildConfigJsonSchema, evalConfigJsonSchema } from '../config/jsonSchema.js';
import { stageTableMarkdown } from '../config/stageTable.js';
import { promptDeparturesMarkdown } from '../prompts/departures.js';
import { sourceTableMarkdown } from '../sources/sourceDocs.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const CONFIG_DOC = path.join(REPO, 'docs/configuration.md');
export const ARCHITECTURE_DOC = path.join(REPO, 'docs/architecture.md');
export const SOURCES_DOC = path.join(REPO, 'docs/sources.md');
export const DATA_QUALITY_DOC = path.join(REPO, 'docs/data-quality.md');
export const SCHEMA_FILE = path.join(REPO, 'examples/build-config.schema.json');
export const EVAL_SCHEMA_FILE = path.join(REPO, 'examples/eval-input.schema.json');

/** The configs' JSON Schemas as committed (and as `mmif schema [--eval]` prints them). */
export const schemaText = () => `${JSON.stringify(buildConfigJsonSchema(), null, 2)}\n`;
export const evalSchemaText = () => `${JSON.stringify(evalConfigJsonSchema(), null, 2)}\n`;
export const BEGIN = '<!-- BEGIN GENERATED REFERENCE: npm run docs:config -->';
export const END = '<!-- END GENERATED REFERENCE -->';
const STAGES_BEGIN = '<!-- BEGIN GENERATED STAGE TABLE: npm run docs:config -->';
const STAGES_END = '<!-- END GENERATED STAGE TABLE -->';
export const SOURCES_BEGIN = '<!-- BEGIN GENERATED SOURCE TABLE: npm run docs:config -->';
export const SOURCES_END = '<!-- END GENERATED SOURCE TABLE -->';
const DEPARTURES_BEGIN = '<!-- BEGIN GENERATED PROMPT DEPARTURES: npm run docs:config -->';
const DEPARTURES_END = '<!-- END GENERATED PROMPT DEPARTURES -->';

/** `doc` (named `name` in errors) with the text between `begin` and `end` replaced by `text`. */
function withGenerated(doc: string, name: string, [begin, end]: readonly [string, string], text: string): string {
  const from = doc.indexOf(begin);
  const to = doc.indexOf(end);
  if (from < 0 || to < from) throw new Error(`${name}: the markers ${begin} ... ${end} are missing`);
  return `${doc.slice(0, from + begin.length)}\n\n${text}\n\n${doc.slice(to)}`;
}

/** docs/configuration.md with its reference as the current schemas give it. */
export const withReference = (doc: string): string => withGenerated(doc, 'docs/configuration.md', [BEGIN, END], configReferenceMarkdown());

/** docs/architecture.md with its stage table as the stage descriptors give it. */
export const withStageTable = (doc: string): string => withGenerated(doc, 'docs/architecture.md', [STAGES_BEGIN, STAGES_END], stageTableMarkdown());

/** docs/sources.md with its source-type table as the source registry gives it. */
export const withSourceTable = (doc: string): string => withGenerated(doc, 'docs/sources.md', [SOURCES_BEGIN, SOURCES_END], sourceTableMarkdown());

/** docs/data-quality.md with its list of prompt departures as prompts/departures.ts gives it. */
export const withDeparturesTable = (doc: string): string => withGenerated(doc, 'docs/data-quality.md', [DEPARTURES_BEGIN, DEPARTURES_END], promptDeparturesMarkdown());

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await writeFile(CONFIG_DOC, withReference(await readFile(CONFIG_DOC, 'utf8')));
  await mkdir(path.dirname(SCHEMA_FILE), { recursive: true });
  await writeFile(SCHEMA_FILE, schemaText());
  await writeFile(EVAL_SCHEMA_FILE, evalSchemaText());
  await writeFile(ARCHITECTURE_DOC, withStageTable(await readFile(ARCHITECTURE_DOC, 'utf8')));
  await writeFile(SOURCES_DOC, withSourceTable(await readFile(SOURCES_DOC, 'utf8')));
  await writeFile(DATA_QUALITY_DOC, withDeparturesTable(await readFile(DATA_QUALITY_DOC, 'utf8')));
  console.log(`wrote ${[CONFIG_DOC, SCHEMA_FILE, EVAL_SCHEMA_FILE, ARCHITECTURE_DOC, SOURCES_DOC, DATA_QUALITY_DOC].map((f) => path.relative(process.cwd(), f)).join(', ')}`);
}
