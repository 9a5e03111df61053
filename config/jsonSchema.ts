/**
 * The JSON Schema of the configs a user writes, made from the zod schemas themselves (zod 4's
 * `z.toJSONSchema`, https://zod.dev/json-schema), so editors can complete a config's fields and the
 * reference in docs/configuration.md cannot drift from what the workflow accepts.
 */
import { z } from 'zod';
import { buildConfigSchema } from './buildConfig.js';
import { evalConfigSchema } from './evalConfig.js';

export type JsonSchema = Record<string, unknown>;

/**
 * The schema of what a user writes (`io: 'input'`: defaulted fields are optional). Transforms and
 * refinements cannot be written in JSON Schema; `unrepresentable: 'any'` leaves them unconstrained
 * there, and the workflow's zod parse still applies them.
 */
function inputSchema(schema: z.ZodType, title: string): JsonSchema {
  return { title, ...z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) } as JsonSchema;
}

/** A config may name its schema in `$schema` (config/parseConfig.ts drops that key before parsing). */
function withSchemaLink(schema: JsonSchema): JsonSchema {
  const properties = schema.properties as Record<string, unknown>;
  return { ...schema, properties: { $schema: { type: 'string', description: 'the JSON Schema this file follows (for editors)' }, ...properties } };
}

export const buildConfigJsonSchema = (): JsonSchema => withSchemaLink(inputSchema(buildConfigSchema, 'mmif-engine build config'));
export const evalConfigJsonSchema = (): JsonSchema => withSchemaLink(inputSchema(evalConfigSchema, 'mmif-engine eval input'));
