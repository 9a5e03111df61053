/**
 * Numbers read from environment variables (a worker's activity slots and rate, OTLP export timing,
 * the simulator's GPU fleet): one parser, so every such variable is refused the same way, in one line
 * naming it and its value.
 */
import { ConfigError } from './configError.js';

/**
 * The positive number in variable `name`: undefined when unset or blank, a ConfigError naming the
 * variable otherwise. `unit` words what the number counts ("milliseconds").
 */
export function positiveEnvNumber(name: string, env: Record<string, string | undefined> = process.env, unit?: string): number | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  const value = Number(raw);
  if (!(value > 0) || !Number.isFinite(value))
    throw new ConfigError(`Invalid environment variable ${name}=${JSON.stringify(raw)}: expected a positive number${unit ? ` of ${unit}` : ''}`);
  return value;
}
