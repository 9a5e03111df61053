/** Parsing a config document against its zod schema, with one error message form for every config. */
import type { z } from 'zod';
import { ConfigError } from './configError.js';

/** Parses `input`; throws a ConfigError whose message names every bad field by its JSON path. */
export function parseConfig<S extends z.ZodType>(schema: S, input: unknown, what: string): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const problems = result.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`);
  throw new ConfigError(`invalid ${what}: ${problems.join('; ')}`);
}
