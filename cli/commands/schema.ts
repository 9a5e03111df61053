import { parseFlags } from '../../config/commandFlags.js';
import { buildConfigJsonSchema, evalConfigJsonSchema } from '../../config/jsonSchema.js';
import { EXIT } from '../exitCodes.js';

export const SCHEMA_USAGE = `usage: mmif schema [--eval]
  Print the build config's JSON Schema (made from the schema the workflow validates with), for
  editors: name it in a config's "$schema" to complete its fields (examples/build-config.schema.json
  is the same, committed). --eval prints the \`mmif eval\` workflow input's.`;

export async function schemaCommand(args: string[]): Promise<number> {
  const { values } = parseFlags({ args, options: { eval: { type: 'boolean' } } });
  process.stdout.write(`${JSON.stringify(values.eval ? evalConfigJsonSchema() : buildConfigJsonSchema(), null, 2)}\n`);
  return EXIT.ok;
}
