/**
 * The source types, the one list: the config schema (config/sourceConfig.ts), `mmif init`, the
 * dataset card and the source table of docs/sources.md are all derived from it, and each type's
 * reader is bound to it in sources/source.ts (the compiler refuses a type without one).
 *
 * Adding a source type (docs/sources.md, "Adding a source type"): a folder sources/<type>/ with
 * definition.ts (defineSource: config fields, defaults, docs row; pure, config level) and reader.ts
 * (`open(config, sourceIndex, s3): SourceReader`, see sources/contract.ts), the definition listed
 * here, the reader in sources/source.ts, a fixture under test/fixtures/, then `npm run docs:config`.
 * Pure: imports definitions only, never a reader (it is config-level code, test/unit/layering.test.ts).
 */
import { allavaDefinition } from './allava/definition.js';
import { cc3mDefinition } from './cc3m/definition.js';
import { chartqaDefinition } from './chartqa/definition.js';
import { geo170kDefinition } from './geo170k/definition.js';
import { imagefolderDefinition } from './imagefolder/definition.js';
import { llavaDefinition } from './llava/definition.js';
import { multiuiDefinition } from './multiui/definition.js';
import { parquetDefinition } from './parquet/definition.js';
import { ricoDefinition } from './rico/definition.js';

/** In the order docs, `init` and error messages list them. */
export const SOURCE_DEFINITIONS = [
  cc3mDefinition,
  allavaDefinition,
  chartqaDefinition,
  geo170kDefinition,
  ricoDefinition,
  multiuiDefinition,
  imagefolderDefinition,
  llavaDefinition,
  parquetDefinition,
] as const;

export type SourceType = (typeof SOURCE_DEFINITIONS)[number]['type'];

export const SOURCE_TYPES: readonly SourceType[] = SOURCE_DEFINITIONS.map((d) => d.type);

export function sourceDefinition(type: SourceType): (typeof SOURCE_DEFINITIONS)[number] {
  return SOURCE_DEFINITIONS.find((d) => d.type === type)!;
}
