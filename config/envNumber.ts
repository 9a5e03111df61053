/**
 * Numbers read from environment variables (a worker's activity slots and rate, OTLP export timing,
 * the simulator's port, seed, faults and GPU fleet): one reader, so every such variable is refused
 * the same way, as a ConfigError in one line naming it and its value.
 */
import { z } from 'zod';
import { ConfigError } from './configError.js';

type Env = Record<string, string | undefined>;

/**
 * The number in variable `name` that `schema` accepts: undefined when unset or blank, a ConfigError
 * naming the variable otherwise, saying `expected` or else what the schema refused.
 */
export function envNumber(name: string, env: Env, schema: z.ZodType<number | undefined>, expected?: string): number | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  const result = schema.safeParse(Number(raw));
  if (result.success) return result.data;
  const problem = expected ?? result.error.issues.map((issue) => issue.message).join('; ');
  throw new ConfigError(`Invalid environment variable ${name}=${JSON.stringify(raw)}: ${problem}`);
}

/** The positive (finite) number in variable `name`; `unit` words what the number counts ("milliseconds"). */
export function positiveEnvNumber(name: string, env: Env = process.env, unit?: string): number | undefined {
  return envNumber(name, env, z.number().positive().finite(), `expected a positive number${unit ? ` of ${unit}` : ''}`);
}
