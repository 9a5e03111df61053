/**
 * `mmif schema`: prints the JSON Schema of the build config (or the eval input, or the ground
 * truth), derived from the schemas the code validates with, for editors and other tools.
 */
import { parseFlags } from '../../config/commandFlags.js';
import { buildConfigJsonSchema, evalConfigJsonSchema } from '../../config/jsonSchema.js';
import { groundTruthJsonSchema } from '../../domain/groundTruth.js';
import { EXIT } from '../exitCodes.js';

export const SCHEMA_USAGE = `usage: mmif schema [--eval | --ground-truth]
  Print the build config's JSON Schema (made from the schema the workflow validates with), for
  editors: name it in a config's "$schema" to complete its fields (examples/build-config.schema.json
  is the same, committed). --eval prints the \`mmif eval\` workflow input's. --ground-truth prints
  the ground truth of the RL exports and \`mmif reward serve\` (docs/rl-rewards.md).`;

export async function schemaCommand(args: string[]): Promise<number> {
  const { values } = parseFlags({ args, options: { eval: { type: 'boolean' }, 'ground-truth': { type: 'boolean' } } });
  const schema = values['ground-truth'] ? groundTruthJsonSchema() : values.eval ? evalConfigJsonSchema() : buildConfigJsonSchema();
  process.stdout.write(`${JSON.stringify(schema, null, 2)}\n`);
  return EXIT.ok;
}
