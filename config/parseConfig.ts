/**
 * Parsing a config document against its zod schema, with one error message form for every config.
 * The messages help a user writing a config by hand: a missing object names the minimum it needs
 * (`models.default.model is required`), an unknown field gets the closest known one (`shardsize:
 * unknown field; did you mean shardSize?`), and a value of a fixed set written in the wrong case is
 * recognised (`"ChartQA" ...; did you mean "chartqa"?`).
 */
import type { z } from 'zod';
import { closestName } from '../domain/closestName.js';
import { ConfigError } from './configError.js';
import { defOf, WRAPPER_TYPES } from './zodDefs.js';

/**
 * Parses `input`; throws a ConfigError whose message names every bad field by its JSON path. A
 * top-level `$schema` (the JSON Schema editors complete fields from, `mmif schema`) is not part of
 * the config and is dropped first, so it changes no fingerprint.
 */
export function parseConfig<S extends z.ZodType>(schema: S, input: unknown, what: string): z.output<S> {
  const result = schema.safeParse(withoutSchemaLink(input));
  if (result.success) return result.data;
  const problems = result.error.issues.flatMap((issue) => describeIssue(schema, withoutSchemaLink(input), issue));
  throw new ConfigError(`invalid ${what}: ${problems.join('; ')}`);
}

function withoutSchemaLink(input: unknown): unknown {
  if (input === null || typeof input !== 'object' || !('$schema' in input)) return input;
  const { $schema: _forEditors, ...config } = input as Record<string, unknown>;
  return config;
}

type Issue = z.core.$ZodIssue;
const shown = (path: PropertyKey[]) => (path.length ? path.map(String).join('.') : '(root)');

function describeIssue(schema: z.ZodType, input: unknown, issue: Issue): string[] {
  const at = shown(issue.path);
  if (issue.code === 'invalid_type' && valueAt(input, issue.path) === undefined) {
    return [`${shown(minimumPath(schema, input, issue.path))} is required`];
  }
  if (issue.code === 'unrecognized_keys') {
    const known = keysAt(schema, input, issue.path);
    return issue.keys.map((key) => {
      const near = closestName(key, known);
      return `${shown([...issue.path, key])}: unknown field${near ? `; did you mean ${near}?` : ''}`;
    });
  }
  const options = issue.code === 'invalid_union' ? (issue as { options?: unknown[] }).options : issue.code === 'invalid_value' ? issue.values : undefined;
  if (options && options.every((o) => typeof o === 'string')) {
    const value = valueAt(input, issue.path);
    const sameLetters = (options as string[]).find((o) => typeof value === 'string' && o.toLowerCase() === value.toLowerCase());
    const list = (options as string[]).join(', ');
    return [`${at}: ${JSON.stringify(value)} is not one of ${list}${sameLetters ? `; did you mean "${sameLetters}"?` : ''}`];
  }
  return [`${at}: ${issue.message}`];
}

function valueAt(input: unknown, path: PropertyKey[]): unknown {
  let value = input;
  for (const key of path) value = value !== null && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[key] : undefined;
  return value;
}

/** The schema under wrappers (optional, default, pipe...): the one that says what the value is. */
function unwrap(schema: z.ZodType, input: unknown): z.ZodType {
  for (let s = schema; ;) {
    const def = defOf(s);
    if (WRAPPER_TYPES.has(def.type)) {
      s = def.innerType as z.ZodType;
      continue;
    }
    switch (def.type) {
      case 'pipe':
        s = def.in as z.ZodType;
        continue;
      case 'lazy':
        s = (def.getter as () => z.ZodType)();
        continue;
      case 'union': {
        // A discriminated union: the option the input names, else the first.
        const options = def.options as z.ZodType[];
        const discriminator = def.discriminator as string | undefined;
        const tag = discriminator && input !== null && typeof input === 'object' ? (input as Record<string, unknown>)[discriminator] : undefined;
        s = options.find((o) => keysOf(o).includes(discriminator ?? '') && matchesTag(o, discriminator!, tag)) ?? options[0]!;
        continue;
      }
      default:
        return s;
    }
  }
}

function matchesTag(option: z.ZodType, discriminator: string, tag: unknown): boolean {
  const field = (defOf(option).shape as Record<string, z.ZodType>)[discriminator];
  return field !== undefined && (defOf(field).values as unknown[] | undefined)?.includes(tag) === true;
}

const keysOf = (schema: z.ZodType): string[] => {
  const def = defOf(schema);
  return def.type === 'object' ? Object.keys(def.shape as object) : [];
};

/** The schema at `path` of `input` (array indexes and record keys step into their element). */
function schemaAt(schema: z.ZodType, input: unknown, path: PropertyKey[]): z.ZodType | undefined {
  let s: z.ZodType | undefined = schema;
  let value = input;
  for (const key of path) {
    const def = defOf(unwrap(s!, value));
    if (def.type === 'object') s = (def.shape as Record<string, z.ZodType>)[String(key)];
    else if (def.type === 'array') s = def.element as z.ZodType;
    else if (def.type === 'record') s = def.valueType as z.ZodType;
    else return undefined;
    if (!s) return undefined;
    value = value !== null && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[key] : undefined;
  }
  return s;
}

function keysAt(schema: z.ZodType, input: unknown, path: PropertyKey[]): string[] {
  const s = schemaAt(schema, input, path);
  return s ? keysOf(unwrap(s, valueAt(input, path))) : [];
}

/** Whether a field may be left out: optional, or defaulted. */
function omittable(schema: z.ZodType): boolean {
  const type = defOf(schema).type;
  return type === 'optional' || type === 'default' || type === 'prefault';
}

/** A missing object's first required field, and so on down: the least that must be written. */
function minimumPath(schema: z.ZodType, input: unknown, path: PropertyKey[]): PropertyKey[] {
  const out = [...path];
  let s = schemaAt(schema, input, path);
  while (s) {
    const def = defOf(unwrap(s, undefined));
    if (def.type !== 'object') break;
    const entry = Object.entries(def.shape as Record<string, z.ZodType>).find(([, field]) => !omittable(field));
    if (!entry) break;
    out.push(entry[0]);
    s = entry[1];
  }
  return out;
}
